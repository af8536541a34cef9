"""The recipes agent in the SDK worker; plan_dinner reaches a real grocery worker through a stand-in kernel."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from agent_worker import Worker, WorkerFailed, kernel_call

from dreamer.agents.bundles import starter_bundles
from dreamer.agents.recipes.recipes.catalog import RECIPES

GROCERY, RECIPES_BUNDLE = starter_bundles()[:2]
BY_NAME = {r.name: r for r in RECIPES}


@pytest.fixture
def grocery(start_worker: Callable[..., Worker]) -> Worker:
    return start_worker(GROCERY, "grocery.server", "grocery")


@pytest.fixture
def recipes(start_worker: Callable[..., Worker]) -> Worker:
    return start_worker(RECIPES_BUNDLE, "recipes.server", "recipes")


def wire(recipes: Worker, grocery: Worker, granted: set[str]) -> list[dict]:
    """Let recipes call grocery through the stand-in kernel; return the calls it made."""
    seen: list[dict] = []
    handler = kernel_call({"grocery": grocery}, "recipes", granted)

    def record(method: str, params: dict) -> object:
        seen.append(params)
        return handler(method, params)

    recipes.syscalls["agents.call"] = record
    return seen


def refused(worker: Worker, function: str, args: dict) -> str:
    with pytest.raises(WorkerFailed) as err:
        worker.invoke(function, args)
    assert err.value.kind == "invalid_argument", err.value.error
    message = err.value.message
    assert message.strip() and "\n" not in message and "Traceback" not in message and "Error" not in message
    return message


def test_describe(recipes: Worker) -> None:
    specs = recipes.describe()
    assert set(specs) == {"suggest", "get_recipe", "plan_dinner"}
    assert all(s["exported"] and not s["confirm"] and not s["background"] for s in specs.values())
    params = specs["plan_dinner"]["parameters"]["properties"]
    assert params["day"]["default"] == "today" and params["add_to_grocery_list"]["default"] is True
    assert set(specs["suggest"]["parameters"]["properties"]) == {"ingredient", "cuisine", "max_minutes", "diet", "avoid"}
    assert "plan dinner for {day}" in specs["plan_dinner"]["examples"]
    assert any("{ingredient}" in e for e in specs["suggest"]["examples"])


def test_suggest_by_ingredient_matches_whole_words_in_ingredient_names(recipes: Worker) -> None:
    out = recipes.invoke("suggest", {"ingredient": "Chicken"})
    names = [r["name"] for r in out["recipes"]]
    assert "Chicken Tacos" in names and "Oyakodon" in names  # both use "chicken thighs"
    for found in out["recipes"]:
        assert any(re.search(r"\bchicken\b", i) for i in found["ingredients"]), found["name"]
        assert set(found) == {"name", "cuisine", "minutes", "ingredients"}
    expected = [r.name for r in RECIPES if any(re.search(r"\bchicken\b", i) for i in r.ingredient_names)]
    assert sorted(names) == sorted(expected) and out["count"] == len(expected)
    # quickest first, then by name; the same every time
    assert [(r["minutes"], r["name"]) for r in out["recipes"]] == sorted((r["minutes"], r["name"]) for r in out["recipes"])
    assert recipes.invoke("suggest", {"ingredient": "chicken"})["recipes"] == out["recipes"]


def test_suggest_tolerates_plurals_and_other_names_but_not_other_words(recipes: Worker) -> None:
    egg = [r["name"] for r in recipes.invoke("suggest", {"ingredient": "egg"})["recipes"]]
    assert "Spanish Tortilla" in egg and "Ratatouille" not in egg  # eggs yes, eggplant no
    tomato = [r["name"] for r in recipes.invoke("suggest", {"ingredient": "tomato"})["recipes"]]
    assert "Ratatouille" in tomato and "Shakshuka" in tomato  # "tomatoes", "crushed tomatoes"
    prawns = [r["name"] for r in recipes.invoke("suggest", {"ingredient": "prawns"})["recipes"]]
    assert "Pad Thai" in prawns and "Gambas al Ajillo" in prawns
    assert recipes.invoke("suggest", {"ingredient": "unobtainium"})["count"] == 0
    # no ingredient by that name, but a dish: ideas with "shakshuka" are Shakshuka
    assert [r["name"] for r in recipes.invoke("suggest", {"ingredient": "shakshuka"})["recipes"]] == ["Shakshuka"]


def test_suggest_by_cuisine_and_time(recipes: Worker) -> None:
    italian = recipes.invoke("suggest", {"cuisine": "ITALIAN"})
    assert italian["count"] == sum(r.cuisine == "Italian" for r in RECIPES) >= 3
    assert {r["cuisine"] for r in italian["recipes"]} == {"Italian"}
    assert recipes.invoke("suggest", {"cuisine": "middle-eastern"})["count"] >= 2
    quick = recipes.invoke("suggest", {"max_minutes": 20})
    assert quick["count"] == sum(r.minutes <= 20 for r in RECIPES) > 0
    assert all(r["minutes"] <= 20 for r in quick["recipes"])
    both = recipes.invoke("suggest", {"ingredient": "chicken", "cuisine": "japanese", "max_minutes": 25})
    assert {r["name"] for r in both["recipes"]} == {"Chicken Teriyaki", "Oyakodon"}
    assert recipes.invoke("suggest", {})["count"] == len(RECIPES)
    # Words around the one cuisine named ("something italian tonight") do not hide it.
    assert recipes.invoke("suggest", {"cuisine": "italian tonight"})["count"] == italian["count"]


def test_suggest_refuses_bad_criteria(recipes: Worker) -> None:
    message = refused(recipes, "suggest", {"cuisine": "klingon"})
    assert "Italian" in message and "Thai" in message
    assert "at least 1" in refused(recipes, "suggest", {"max_minutes": 0})
    refused(recipes, "suggest", {"ingredient": "x" * 101})
    refused(recipes, "suggest", {"ingredient": "123"})


def test_get_recipe(recipes: Worker) -> None:
    full = recipes.invoke("get_recipe", {"name": "carbonara"})
    carbonara = BY_NAME["Spaghetti Carbonara"]
    assert full["name"] == carbonara.name and full["ingredients"] == carbonara.ingredient_names
    assert full["steps"] == list(carbonara.steps) and "400 g spaghetti" in full["quantities"]
    assert "Pad Thai" in refused(recipes, "get_recipe", {"name": "pad tai"})
    assert "Chicken Tacos" in refused(recipes, "get_recipe", {"name": "chicken"})
    refused(recipes, "get_recipe", {"name": "   "})
    # a whole name said with words around it is that recipe; a name lost among many other words is not
    assert recipes.invoke("get_recipe", {"name": "pad thai recipe"})["name"] == "Pad Thai"
    assert recipes.invoke("get_recipe", {"name": "the pad thai one actually"})["name"] == "Pad Thai"
    assert "no recipe called" in refused(recipes, "get_recipe", {"name": "pad thai is what my aunt made at the fair"})


def test_plan_dinner_puts_the_ingredients_on_the_grocery_list(recipes: Worker, grocery: Worker) -> None:
    calls = wire(recipes, grocery, {"agent:grocery.add_items"})
    grocery.invoke("add_items", {"items": ["Garlic"]})
    plan = recipes.invoke("plan_dinner", {"day": "2025-03-14"})
    assert (plan["date"], plan["weekday"]) == ("2025-03-14", "Friday")
    recipe = BY_NAME[plan["recipe"]["name"]]
    assert plan["recipe"]["ingredients"] == recipe.ingredient_names and plan["recipe"]["steps"]
    assert calls == [{"agent": "grocery", "function": "add_items", "args": {"items": recipe.ingredient_names}}]
    listed = {i.lower() for i in grocery.invoke("list_items")["items"]}
    assert set(recipe.ingredient_names) <= listed
    assert not set(recipe.pantry) & listed  # staples stay off the list
    assert plan["added_to_grocery_list"] is True
    assert sorted(plan["added"] + [i.lower() for i in plan["already_there"]]) == sorted(recipe.ingredient_names)
    if "garlic" in recipe.ingredient_names:
        assert plan["already_there"] == ["Garlic"]

    again = recipes.invoke("plan_dinner", {"day": "2025-03-14"})
    assert again["recipe"] == plan["recipe"]  # the same day, the same dinner
    assert again["added"] == [] and len(again["already_there"]) == len(recipe.ingredient_names)
    assert any(log["message"] == "planned dinner" for log in recipes.logs)


def test_plan_dinner_without_the_list_makes_no_call(recipes: Worker, grocery: Worker) -> None:
    calls = wire(recipes, grocery, {"agent:grocery.add_items"})
    plan = recipes.invoke("plan_dinner", {"day": "tomorrow", "add_to_grocery_list": False})
    assert calls == [] and plan["added_to_grocery_list"] is False and plan["added"] == []
    assert grocery.invoke("list_items")["count"] == 0


def test_a_week_of_dinners_has_no_repeats(recipes: Worker) -> None:
    week = [
        recipes.invoke("plan_dinner", {"day": f"2025-06-{d:02d}", "add_to_grocery_list": False})["recipe"]["name"]
        for d in range(2, 9)
    ]
    assert len(set(week)) == 7


@pytest.mark.parametrize("tz", ["Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"])
def test_today_is_the_users_today(recipes: Worker, tz: str) -> None:
    before = datetime.now(ZoneInfo(tz)).date()
    plan = recipes.invoke("plan_dinner", {"add_to_grocery_list": False}, user={"id": 1, "name": "me", "timezone": tz})
    after = datetime.now(ZoneInfo(tz)).date()
    assert plan["timezone"] == tz
    assert plan["date"] in {before.isoformat(), after.isoformat()}
    tomorrow = recipes.invoke(
        "plan_dinner", {"day": "tomorrow", "add_to_grocery_list": False}, user={"id": 1, "name": "me", "timezone": tz}
    )
    assert tomorrow["date"] in {(before + timedelta(days=1)).isoformat(), (after + timedelta(days=1)).isoformat()}


def test_plan_dinner_refuses_an_unknown_day(recipes: Worker, grocery: Worker) -> None:
    calls = wire(recipes, grocery, {"agent:grocery.add_items"})
    message = refused(recipes, "plan_dinner", {"day": "someday soon"})
    assert "someday soon" in message and "tomorrow" in message
    assert "not a real date" in refused(recipes, "plan_dinner", {"day": "2025-02-30"})
    assert calls == []


def test_a_revoked_grant_surfaces_as_permission_denied(recipes: Worker, grocery: Worker) -> None:
    wire(recipes, grocery, granted=set())
    with pytest.raises(WorkerFailed) as err:
        recipes.invoke("plan_dinner", {"day": "friday"})
    assert err.value.kind == "permission_denied"
    assert "agent:grocery.add_items" in err.value.message
    assert grocery.invoke("list_items")["count"] == 0
    # Granting the whole grocery agent covers add_items too.
    wire(recipes, grocery, granted={"agent:grocery"})
    assert recipes.invoke("plan_dinner", {"day": "friday"})["added"]


def remembered(recipes: Worker, facts: list[str] | None) -> list[dict]:
    """Serve memory.read as the kernel does: the facts, or permission_denied when `facts` is None."""
    asked: list[dict] = []

    def read(method: str, params: dict) -> object:
        asked.append(params)
        if facts is None:
            raise WorkerFailed({"code": -32000, "message": "recipes may not read Sidekick's memory",
                                "data": {"kind": "permission_denied"}})
        return {"facts": facts, "answer": None, "model": None}

    recipes.syscalls["memory.read"] = read
    # ctx.granted("memory:read") asks first; say yes even when the read is then refused,
    # as when a grant is revoked between the two.
    recipes.syscalls["grants.check"] = lambda method, params: {"granted": True, "by": params["scope"]}
    return asked


def test_plan_dinner_honours_a_remembered_diet(recipes: Worker) -> None:
    from dreamer.agents.recipes.recipes.diet import GROUPS, conflicts

    asked = remembered(recipes, ["I live in Lyon", "I'm vegetarian"])
    plans = [
        recipes.invoke("plan_dinner", {"day": f"2025-06-{d:02d}", "add_to_grocery_list": False}) for d in range(1, 15)
    ]
    assert asked[0] == {"question": "What does the user not eat or prefer for dinner?"}
    for plan in plans:
        recipe = BY_NAME[plan["recipe"]["name"]]
        assert conflicts(recipe, GROUPS["meat"] + GROUPS["seafood"]) == [], recipe.name
        assert plan["respecting"] == ["I'm vegetarian"]
    assert len({p["recipe"]["name"] for p in plans}) == 14  # two weeks, no repeats


def test_plan_dinner_and_suggest_leave_out_what_to_avoid(recipes: Worker) -> None:
    from dreamer.agents.recipes.recipes.diet import GROUPS, conflicts

    for d in range(1, 8):
        plan = recipes.invoke("plan_dinner", {"day": f"2025-06-{d:02d}", "add_to_grocery_list": False,
                                              "avoid": "meat or fish"})
        recipe = BY_NAME[plan["recipe"]["name"]]
        assert conflicts(recipe, GROUPS["meat"] + GROUPS["fish"]) == [], recipe.name
        assert plan["respecting"] == ["I don't eat meat or fish"]
    shown = recipes.invoke("suggest", {"avoid": "shellfish"})["recipes"]
    assert shown and all(conflicts(BY_NAME[r["name"]], GROUPS["shellfish"]) == [] for r in shown)
    assert len(shown) < len(recipes.invoke("suggest", {})["recipes"])  # something was left out


def test_plan_dinner_without_memory_plans_as_before(recipes: Worker) -> None:
    days = [f"2025-06-{d:02d}" for d in range(1, 8)]
    # The kernel refuses (memory:read not granted) or does not serve memory at all: the same dinners.
    remembered(recipes, None)
    refused_plans = [recipes.invoke("plan_dinner", {"day": d, "add_to_grocery_list": False}) for d in days]
    del recipes.syscalls["memory.read"]
    recipes.syscalls["grants.check"] = lambda method, params: {"granted": False, "by": None}
    unserved = [recipes.invoke("plan_dinner", {"day": d, "add_to_grocery_list": False}) for d in days]
    remembered(recipes, [])
    nothing = [recipes.invoke("plan_dinner", {"day": d, "add_to_grocery_list": False}) for d in days]
    assert [p["recipe"] for p in refused_plans] == [p["recipe"] for p in unserved] == [p["recipe"] for p in nothing]
    assert all(p["respecting"] == [] for p in refused_plans + unserved + nothing)


def test_plan_dinner_says_when_nothing_fits(recipes: Worker, grocery: Worker) -> None:
    calls = wire(recipes, grocery, {"agent:grocery.add_items"})
    remembered(recipes, ["I'm vegan", "I'm gluten-free", "I don't eat onions", "I hate garlic", "I hate rice",
                         "I don't eat tomatoes, potatoes, beans, lentils, chickpeas or peppers"])
    message = refused(recipes, "plan_dinner", {"day": "friday"})
    assert message.startswith("No recipe in the catalog fits what you asked for") and "I'm vegan" in message
    assert calls == []


def test_a_diet_named_in_the_request_rules_recipes_out(recipes: Worker) -> None:
    from dreamer.agents.recipes.recipes.diet import GROUPS, conflicts

    meat = GROUPS["meat"] + GROUPS["seafood"]
    remembered(recipes, [])  # nothing remembered: only the argument decides
    plans = [recipes.invoke("plan_dinner", {"day": f"2025-06-{d:02d}", "add_to_grocery_list": False, "diet": "vegetarian"})
             for d in range(1, 8)]
    for plan in plans:
        assert conflicts(BY_NAME[plan["recipe"]["name"]], meat) == [], plan["recipe"]["name"]
    everything = recipes.invoke("suggest", {})["recipes"]
    vegetarian = recipes.invoke("suggest", {"diet": "Vegetarian"})
    assert vegetarian["criteria"]["diet"] == "vegetarian"
    assert 0 < len(vegetarian["recipes"]) < len(everything)
    assert all(conflicts(BY_NAME[r["name"]], meat) == [] for r in vegetarian["recipes"])
    with_meat = [r["name"] for r in everything if conflicts(BY_NAME[r["name"]], meat)]
    assert with_meat and not set(with_meat) & {r["name"] for r in vegetarian["recipes"]}


def test_an_unknown_diet_is_refused_in_one_sentence(recipes: Worker) -> None:
    message = refused(recipes, "suggest", {"diet": "carnivore"})
    assert "carnivore" in message and "vegetarian" in message
