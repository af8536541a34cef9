"""The recipes agent's reading of remembered facts: what they rule out of the catalog."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from dreamer.agents.recipes.recipes.catalog import RECIPES
from dreamer.agents.recipes.recipes.days import recipe_for
from dreamer.agents.recipes.recipes.diet import GROUPS, conflicts, recipe_for_diet, restrictions

BY_NAME = {r.name: r for r in RECIPES}
MEAT_OR_FISH = GROUPS["meat"] + GROUPS["seafood"]


def allowed(*facts: str) -> set[str]:
    avoided = restrictions(facts).avoided
    return {r.name for r in RECIPES if not conflicts(r, avoided)}


def test_vegetarian_rules_out_meat_and_fish_even_in_stock_and_sauces() -> None:
    ok = allowed("I'm vegetarian")
    assert {"Margherita Pizza", "Chana Masala", "Ratatouille", "Spanish Tortilla", "Palak Paneer"} <= ok
    for name in ("Spaghetti Carbonara", "Chicken Tacos", "Pad Thai", "Miso-Glazed Salmon", "Beef Pho",
                 "Mushroom Risotto",  # chicken stock
                 "French Onion Soup",  # beef stock
                 "Mapo Tofu"):  # ground pork
        assert name not in ok, name
    assert len(ok) >= 10


def test_vegan_also_rules_out_dairy_and_eggs() -> None:
    ok = allowed("We're vegan")
    assert "Chana Masala" in ok
    assert not {"Margherita Pizza", "Spanish Tortilla", "Palak Paneer", "Shakshuka"} & ok


@pytest.mark.parametrize(
    ("fact", "gone", "kept"),
    [
        ("I don't eat pork", {"Spaghetti Carbonara", "Mapo Tofu", "Kimchi Fried Rice", "Coq au Vin"}, {"Chicken Tacos"}),
        ("I do not eat pork", {"Spaghetti Carbonara"}, {"Beef and Broccoli"}),
        ("I'm allergic to nuts", {"Kung Pao Chicken", "Pad Thai"}, {"Thai Green Curry"}),  # coconut milk is not a nut
        ("I have a peanut allergy", {"Kung Pao Chicken", "Pad Thai"}, {"Chicken Tacos"}),
        ("I never eat red meat", {"Classic Cheeseburgers", "Shepherd's Pie", "Spaghetti Carbonara"}, {"Chicken Tacos"}),
        ("I don't eat meat but I eat fish", {"Chicken Tacos", "Beef Pho"}, {"Miso-Glazed Salmon", "Fish and Chips"}),
        ("I'm pescatarian", {"Chicken Tacos"}, {"Miso-Glazed Salmon", "Pad Thai"}),
        ("I'm lactose intolerant", {"Mac and Cheese", "Palak Paneer"}, {"Chana Masala"}),
        ("I'm gluten-free", {"Margherita Pizza", "Penne all'Arrabbiata", "Fish and Chips"}, {"Chana Masala"}),
        ("I hate coriander", {"Chicken Tacos", "Falafel Wraps"}, {"Margherita Pizza"}),
        ("I don't like spicy food", {"Penne all'Arrabbiata", "Kung Pao Chicken"}, {"Margherita Pizza"}),
        ("I don't drink alcohol", {"Coq au Vin", "Fish and Chips", "Chicken Teriyaki"}, {"Chana Masala"}),
        ("I don't eat eggs", {"Spanish Tortilla", "Shakshuka"}, {"Ratatouille"}),  # eggplant is not an egg
    ],
)
def test_what_a_fact_rules_out(fact: str, gone: set[str], kept: set[str]) -> None:
    ok = allowed(fact)
    assert not gone & ok, gone & ok
    assert kept <= ok, kept - ok


@pytest.mark.parametrize(
    "fact",
    ["I live in Lyon", "My favourite cuisine is Thai", "I'm not vegetarian any more", "I love chicken",
     "I work as a nurse", "Prefers window seats", ""],
)
def test_facts_about_other_things_rule_out_nothing(fact: str) -> None:
    found = restrictions([fact])
    assert found.avoided == frozenset() and found.because == ()
    assert allowed(fact) == {r.name for r in RECIPES}


def test_the_facts_that_mattered_are_named() -> None:
    found = restrictions(["I live in Lyon", "I'm vegetarian", "I'm allergic to nuts"])
    assert found.because == ("I'm vegetarian", "I'm allergic to nuts")


def test_a_diet_keeps_the_rotation_deterministic_and_complete() -> None:
    avoided = restrictions(["I'm vegetarian"]).avoided
    start = date(2025, 6, 2)
    days = [recipe_for_diet(start + timedelta(days=i), avoided) for i in range(len(RECIPES))]
    assert all(d is not None for d in days)
    names = [d.name for d in days if d is not None]
    fitting = allowed("I'm vegetarian")
    assert set(names) == fitting  # every fitting recipe comes round
    assert len(set(names[: len(fitting)])) == len(fitting)  # none twice before all have come
    for recipe in days:
        assert recipe is not None and not conflicts(recipe, MEAT_OR_FISH)
    assert recipe_for_diet(start, avoided) == recipe_for_diet(start, avoided)
    # Without restrictions, the day's recipe is what it always was.
    assert all(recipe_for_diet(start + timedelta(days=i), frozenset()) == recipe_for(start + timedelta(days=i))
               for i in range(60))


def test_nothing_fits() -> None:
    avoided = restrictions(["I'm vegan", "I'm gluten-free", "I don't eat onions", "I hate garlic", "I hate rice",
                            "I don't eat tomatoes", "I don't eat potatoes", "I don't eat beans",
                            "I don't eat lentils", "I don't eat chickpeas", "I don't eat peppers"]).avoided
    assert recipe_for_diet(date(2025, 6, 2), avoided) is None
