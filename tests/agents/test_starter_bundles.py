"""The starter bundles as data: manifests, folder layout, the recipe catalog and day handling."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path
from types import SimpleNamespace

import pytest

from dreamer.agents.bundles import starter_bundles
from dreamer.agents.recipes.recipes.catalog import RECIPES
from dreamer.agents.recipes.recipes.days import ROTATION, recipe_for, resolve_day, zone
from dreamer.contracts.examples import check_costs
from dreamer.contracts.manifest import load_manifest

AGENTS_DIR = Path(__file__).resolve().parents[2] / "agents"


def test_starter_bundles_come_after_the_agents_they_call() -> None:
    bundles = starter_bundles()
    assert [b.name for b in bundles] == ["grocery", "recipes", "notes", "calendar", "sql_explorer", "watch"]
    for bundle in bundles:
        manifest = load_manifest(bundle)
        # A folder is a Python package, so sql-explorer lives in agents/sql_explorer.
        assert manifest.name == bundle.name.replace("_", "-")
        # entry grocery.server is the file grocery/server.py inside the bundle
        module = bundle.joinpath(*manifest.entry.split(".")).with_suffix(".py")
        assert module.is_file(), module
        assert (module.parent / "__init__.py").is_file()
        # The bundle's folder goes on sys.path ahead of the standard library's modules.
        assert manifest.entry.split(".")[0] not in sys.stdlib_module_names, manifest.entry


def test_manifests_declare_exactly_what_the_agents_use() -> None:
    grocery, recipes, notes, calendar, sql_explorer, watch = (load_manifest(b) for b in starter_bundles())
    assert (grocery.version, grocery.publisher, grocery.kind) == ("1.2.3", "dreamer", "agent")
    assert grocery.permissions.required == [] and grocery.permissions.optional == []
    assert (recipes.version, recipes.publisher, recipes.kind) == ("1.3.2", "dreamer", "agent")
    assert recipes.permissions.required == ["agent:grocery.add_items"]
    assert recipes.permissions.optional == ["memory:read"]  # plan_dinner honours remembered diets with it
    assert grocery.triggers == [] and recipes.triggers == []
    # notes and calendar work without any grant; what they may use is optional, so a user can switch it off.
    assert notes.permissions.required == [] and notes.permissions.optional == ["llm", "net:*"]
    assert calendar.permissions.required == []
    assert calendar.permissions.optional == ["agent:notes.search", "agent:grocery.list_items", "tool:calendar.list_events"]
    assert calendar.entry == "calendar_agent.server"  # a package called calendar would hide the stdlib's
    assert notes.triggers == [] and calendar.triggers == []
    # The demo data is its whole job; a model is optional (and costs money, so a starter never gets it unasked).
    assert sql_explorer.name == "sql-explorer" and sql_explorer.entry == "sql_explorer.server"
    assert sql_explorer.permissions.required == ["data:hr-demo"] and sql_explorer.permissions.optional == ["llm"]
    # watch runs on its own (schedule) and posts (notify); the hosts it may read are the user's choice.
    assert watch.permissions.required == ["schedule", "notify"] and watch.permissions.optional == ["net:*"]
    assert [(t.type, t.entrypoint, t.schedule) for t in watch.triggers] == [("cron", "check_watches", "*/30 * * * *")]


def test_every_folder_under_agents_is_a_package() -> None:
    # setup.py turns every folder under agents/ into a dreamer.agents.* package.
    # A tool bundle's skills/ folder holds Agent Skills (SKILL.md in folders named like
    # `calendar-events`), not Python: it is data shipped with the bundle.
    folders = [
        p for p in AGENTS_DIR.rglob("*")
        if p.is_dir() and "__pycache__" not in p.parts and "skills" not in p.relative_to(AGENTS_DIR).parts
    ]
    missing = [str(p.relative_to(AGENTS_DIR)) for p in folders if not (p / "__init__.py").is_file()]
    assert missing == []


def test_catalog_is_real_and_well_formed() -> None:
    assert len(RECIPES) >= 30
    assert len({r.cuisine for r in RECIPES}) >= 8
    assert len({r.name.casefold() for r in RECIPES}) == len(RECIPES)
    for recipe in RECIPES:
        names = recipe.ingredient_names
        assert 0 < recipe.minutes <= 24 * 60 and recipe.serves > 0, recipe.name
        assert names and len(set(names)) == len(names), recipe.name
        assert all(n == n.strip().lower() and n for n in names), recipe.name
        assert all(amount.strip() for _, amount in recipe.ingredients), recipe.name
        # Staples are kept off the shopping list, so never both.
        assert not set(names) & set(recipe.pantry), recipe.name
        assert len(recipe.steps) >= 3, recipe.name
        full = recipe.full()
        assert full["ingredients"] == names and len(full["quantities"]) == len(names)


TODAY = date(2025, 3, 12)  # a Wednesday


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("today", TODAY),
        ("  Tonight ", TODAY),
        ("tomorrow", date(2025, 3, 13)),
        ("Tomorrow?", date(2025, 3, 13)),
        ("yesterday", date(2025, 3, 11)),
        ("friday", date(2025, 3, 14)),
        ("Fri", date(2025, 3, 14)),
        ("this friday", date(2025, 3, 14)),
        ("wednesday", TODAY),
        ("next wednesday", date(2025, 3, 19)),
        ("next friday", date(2025, 3, 14)),
        ("monday", date(2025, 3, 17)),
        ("2025-12-24", date(2025, 12, 24)),
    ],
)
def test_resolve_day(said: str, expected: date) -> None:
    assert resolve_day(said, TODAY) == expected


@pytest.mark.parametrize("said", ["someday", "friday week", "2025-02-30", "13/03/2025", "x" * 500])
def test_resolve_day_refuses_with_a_sentence(said: str) -> None:
    with pytest.raises(ValueError) as err:
        resolve_day(said, TODAY)
    message = str(err.value)
    assert message.endswith(".") and "\n" not in message
    assert len(message) < 200


def test_recipe_rotation_is_deterministic_and_does_not_repeat_within_the_catalog() -> None:
    assert sorted(r.name for r in ROTATION) == sorted(r.name for r in RECIPES)
    start = date(2025, 1, 1).toordinal()
    month = [recipe_for(date.fromordinal(start + i)).name for i in range(len(RECIPES))]
    assert len(set(month)) == len(RECIPES)
    assert recipe_for(date(2025, 1, 1)) == recipe_for(date(2025, 1, 1))


def test_zone_falls_back_to_utc_for_unknown_names() -> None:
    assert zone("Not/AZone")[1] == "UTC"
    assert zone("../../etc/passwd")[1] == "UTC"
    assert zone(None)[1] == "UTC"
    assert zone("Europe/Paris")[1] == "Europe/Paris"


def test_starter_examples_are_within_the_limits_the_kernel_installs() -> None:
    """The kernel refuses a bundle whose examples expand too far (contracts/examples.py) at
    install, so a starter over the limit would stop every first start; tools.json is the
    starters' functions as their code declares them (test_fixture keeps it current)."""
    agents = json.loads((AGENTS_DIR.parent / "tests" / "sidekick" / "tools.json").read_text())
    for agent in agents:
        specs = [SimpleNamespace(name=f["name"], examples=f.get("examples") or []) for f in agent["functions"]]
        assert check_costs(specs) is None, agent["name"]
