"""The grocery agent, run for real in the SDK worker."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from agent_worker import Worker, WorkerFailed

from dreamer.agents.bundles import starter_bundles
from dreamer.agents.recipes.recipes.catalog import RECIPES

GROCERY = starter_bundles()[0]


@pytest.fixture
def grocery(start_worker: Callable[..., Worker], tmp_path: Path) -> Worker:
    return start_worker(GROCERY, "grocery.server", "grocery", tmp_path / "grocery-data")


def refused(worker: Worker, function: str, args: dict) -> WorkerFailed:
    with pytest.raises(WorkerFailed) as err:
        worker.invoke(function, args)
    failed = err.value
    assert failed.kind == "invalid_argument", failed.error
    # One sentence for a person: no exception class, no traceback in the message.
    assert "Traceback" not in failed.message and "Error" not in failed.message
    assert failed.message.strip() and "\n" not in failed.message
    return failed


def test_describe_matches_the_contract(grocery: Worker) -> None:
    specs = grocery.describe()
    assert set(specs) == {"add_items", "remove_items", "list_items", "clear"}
    assert all(s["exported"] and not s["background"] and s["description"] for s in specs.values())
    assert [name for name, s in specs.items() if s["confirm"]] == ["clear"]
    items = specs["add_items"]["parameters"]["properties"]["items"]
    assert items["type"] == "array" and items["items"]["type"] == "string"
    assert specs["add_items"]["parameters"]["required"] == ["items"]
    assert "add {items} to my grocery list" in specs["add_items"]["examples"]
    assert any("{items}" in e for e in specs["remove_items"]["examples"])
    assert specs["list_items"]["examples"] and specs["clear"]["examples"]


def test_add_trims_ignores_empty_and_deduplicates_without_case(grocery: Worker) -> None:
    first = grocery.invoke("add_items", {"items": ["Milk", "  eggs  ", "", "   ", "milk", "oat   milk"]})
    assert first == {"added": ["Milk", "eggs", "oat milk"], "already_there": [], "items": ["Milk", "eggs", "oat milk"]}
    second = grocery.invoke("add_items", {"items": ["MILK", "Egg", "bread"]})
    assert second["added"] == ["bread"]
    assert second["already_there"] == ["Milk", "eggs"]
    assert second["items"] == ["Milk", "eggs", "oat milk", "bread"]
    assert grocery.invoke("list_items") == {"items": ["Milk", "eggs", "oat milk", "bread"], "count": 4}
    assert any(log["message"] == "added items" for log in grocery.logs)


def test_the_list_lives_in_the_agents_own_database(
    start_worker: Callable[..., Worker], tmp_path: Path
) -> None:
    data = tmp_path / "grocery-data"
    first = start_worker(GROCERY, "grocery.server", "grocery", data)
    first.invoke("add_items", {"items": ["coffee", "bananas"]})
    first.stop()
    rows = sqlite3.connect(data / "agent.db").execute("SELECT name FROM items ORDER BY id").fetchall()
    assert rows == [("coffee",), ("bananas",)]
    again = start_worker(GROCERY, "grocery.server", "grocery", data)
    assert again.invoke("list_items")["items"] == ["coffee", "bananas"]


def test_remove_reports_what_was_not_on_the_list(grocery: Worker) -> None:
    grocery.invoke("add_items", {"items": ["Eggs", "butter", "tomatoes"]})
    out = grocery.invoke("remove_items", {"items": ["egg", "EGGS", "cheese", " tomato ", "cheese"]})
    assert out == {"removed": ["Eggs", "tomatoes"], "not_on_list": ["cheese"], "items": ["butter"]}
    assert grocery.invoke("list_items")["items"] == ["butter"]


def test_clear_empties_the_list_and_says_what_went(grocery: Worker) -> None:
    grocery.invoke("add_items", {"items": ["rice", "beans"]})
    assert grocery.invoke("clear") == {"removed": ["rice", "beans"], "count": 2, "items": []}
    assert grocery.invoke("list_items") == {"items": [], "count": 0}
    assert grocery.invoke("clear")["count"] == 0


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"items": ["x"] * 201}, "at most 200 items"),
        ({"items": ["ok", "y" * 201]}, "at most 200 characters"),
        ({"items": ["nul\x00byte"]}, "control characters"),
        ({"items": []}, "nothing to add"),
        ({"items": ["", "  "]}, "nothing to add"),
    ],
)
def test_bad_items_are_refused_and_nothing_changes(grocery: Worker, args: dict, words: str) -> None:
    grocery.invoke("add_items", {"items": ["tea"]})
    failed = refused(grocery, "add_items", args)
    assert words in failed.message
    assert grocery.invoke("list_items")["items"] == ["tea"]


def test_arguments_of_the_wrong_shape_are_invalid(grocery: Worker) -> None:
    for args in ({"items": "milk"}, {"itemz": ["milk"]}, {}, {"items": [1, 2]}):
        with pytest.raises(WorkerFailed) as err:
            grocery.invoke("add_items", args)
        assert err.value.kind == "invalid_argument", args
    refused(grocery, "remove_items", {"items": ["z" * 201]})


def test_the_list_has_a_ceiling(grocery: Worker) -> None:
    for batch in range(5):
        grocery.invoke("add_items", {"items": [f"item {batch}-{i}" for i in range(200)]})
    assert grocery.invoke("list_items")["count"] == 1000
    failed = refused(grocery, "add_items", {"items": ["one more"]})
    assert "1000" in failed.message
    # Adding what is already there is still fine at the ceiling.
    assert grocery.invoke("add_items", {"items": ["item 0-0"]})["already_there"] == ["item 0-0"]
    assert grocery.invoke("list_items")["count"] == 1000


def test_every_recipe_fits_on_an_empty_list_unmerged(grocery: Worker) -> None:
    # plan_dinner relies on this: all of a recipe's ingredients end up on the list.
    for recipe in RECIPES:
        grocery.invoke("clear")
        out = grocery.invoke("add_items", {"items": recipe.ingredient_names})
        assert out["added"] == recipe.ingredient_names, recipe.name
