"""What the user does not eat, read from what Sidekick remembers, and which
recipes that rules out.

Plain functions, no SDK: `restrictions(facts)` turns remembered sentences ("I'm
vegetarian", "I don't eat pork", "I'm allergic to nuts") into the ingredient
words to avoid; `fits(recipe, avoided)` checks a recipe's ingredients and pantry
staples against them. A fact it does not understand rules nothing out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from .catalog import Recipe
from .days import ROTATION

# Ingredient words by group; an ingredient is in a group when it contains one of
# these words (or word sequences) whole, so "eggplant" is not an egg and
# "coconut milk" is not a nut.
GROUPS: dict[str, tuple[str, ...]] = {
    "pork": ("pork", "bacon", "pancetta", "ham", "lardons", "prosciutto", "chorizo", "sausage", "salami"),
    "beef": ("beef", "steak", "sirloin", "veal", "brisket"),
    "lamb": ("lamb", "mutton"),
    "poultry": ("chicken", "turkey", "duck"),
    "fish": ("fish", "salmon", "cod", "tuna", "anchovy", "sardine", "trout", "haddock", "dashi", "worcestershire sauce"),
    "shellfish": ("shrimp", "prawn", "mussel", "clam", "crab", "lobster", "scallop", "oyster", "squid"),
    "dairy": ("milk", "cheese", "butter", "cream", "yogurt", "ghee", "paneer", "mozzarella", "parmesan", "pecorino",
              "feta", "cheddar", "gruyère", "ricotta"),
    "egg": ("egg",),
    "gluten": ("flour", "wheat", "spaghetti", "penne", "macaroni", "pasta", "bread", "breadcrumbs", "baguette", "bun",
               "pita", "pizza dough", "filo", "beer", "soy sauce", "couscous"),
    "nuts": ("nut", "peanut", "almond", "cashew", "walnut", "pecan", "hazelnut", "pistachio"),
    "alcohol": ("wine", "beer", "sake", "mirin", "brandy", "rum"),
    "spicy": ("chili", "chilies", "chilli", "jalapeño", "gochujang", "curry paste", "chili bean paste"),
    "mushrooms": ("mushroom",),
}
GROUPS["red meat"] = GROUPS["pork"] + GROUPS["beef"] + GROUPS["lamb"]
GROUPS["meat"] = GROUPS["red meat"] + GROUPS["poultry"]
GROUPS["seafood"] = GROUPS["fish"] + GROUPS["shellfish"]

# What a diet rules out, by the words that name the diet.
DIETS: dict[str, tuple[str, ...]] = {
    "vegetarian": ("meat", "seafood"),
    "pure veg": ("meat", "seafood"),  # Indian English
    "vegan": ("meat", "seafood", "dairy", "egg"),
    "plant-based": ("meat", "seafood", "dairy", "egg"),
    "plant based": ("meat", "seafood", "dairy", "egg"),
    "pescatarian": ("meat",),
    "pescetarian": ("meat",),
    "pollotarian": ("pork", "beef", "lamb", "seafood"),
    "halal": ("pork", "alcohol"),
    "kosher": ("pork", "shellfish"),
    "lactose intolerant": ("dairy",),
    "lactose-intolerant": ("dairy",),
    "dairy-free": ("dairy",),
    "dairy free": ("dairy",),
    "gluten-free": ("gluten",),
    "gluten free": ("gluten",),
    "gluten intolerant": ("gluten",),
    "celiac": ("gluten",),
    "coeliac": ("gluten",),
    "nut-free": ("nuts",),
    "teetotal": ("alcohol",),
    "sober": ("alcohol",),
}
# Other names for a group when it is what one does not eat ("I don't eat red meat").
GROUP_NAMES: dict[str, str] = {
    "meat": "meat", "red meat": "red meat", "pork": "pork", "pig": "pork", "beef": "beef", "lamb": "lamb",
    "poultry": "poultry", "chicken": "poultry", "fish": "fish", "seafood": "seafood", "shellfish": "shellfish",
    "dairy": "dairy", "lactose": "dairy", "milk": "dairy", "cheese": "dairy", "egg": "egg", "eggs": "egg",
    "gluten": "gluten", "wheat": "gluten", "nuts": "nuts", "nut": "nuts", "tree nuts": "nuts",
    "alcohol": "alcohol", "booze": "alcohol", "spicy food": "spicy", "spicy": "spicy", "spicy things": "spicy",
    "mushrooms": "mushrooms", "mushroom": "mushrooms",
}
# "I don't eat X", "I'm allergic to X", "I hate X": X is what to avoid.
_AVOIDING = re.compile(
    r"\b(?:(?:do not|don't|never|cannot|can't|will not|won't|no longer|rarely)\s+(?:eat|have|drink|stand|like|tolerate)"
    r"|avoid(?:s|ing)?|(?:am|are|is|i'm|we're|he's|she's|they're)\s+(?:\w+\s+)?(?:allergic|intolerant|sensitive)\s+(?:to|of)"
    r"|hate|dislike|detest|(?:not a|no)\s+(?:big\s+)?fan\s+of|eat\s+no)\s+"
    r"(?P<what>(?:(?!\b(?:but|except|unless|though|although)\b)[^.;!?])+)"
)
_ALLERGY = re.compile(r"\b(?P<what>[\w-]+(?:\s+[\w-]+)?)\s+(?:allergy|intolerance)\b")
_NEGATED = re.compile(r"\b(?:not|no longer|never|isn't|aren't|wasn't)\s+(?:\w+\s+){0,2}$")
_SPLIT = re.compile(r"\s*(?:,|\band\b|\bor\b|\bnor\b|/|&)\s*")


@dataclass(frozen=True)
class Restrictions:
    avoided: frozenset[str]  # ingredient words
    because: tuple[str, ...]  # the facts that ruled something out


def _normal(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").casefold().split())


# Cached: a plan checks every recipe's ingredients against every avoided word.
@lru_cache(maxsize=4096)
def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)*", text.casefold()))


@lru_cache(maxsize=4096)
def _stems(word: str) -> frozenset[str]:
    stems = {word}
    if word.endswith("ies"):
        stems |= {word[:-3] + "y", word[:-3] + "i"}
    if word.endswith("es"):
        stems.add(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        stems.add(word[:-1])
    return frozenset(stems)


@lru_cache(maxsize=4096)
def _all_stems(text: str) -> frozenset[str]:
    return frozenset().union(*(_stems(w) for w in _words(text)))


def _contains(name: str, term: str) -> bool:
    """Whole words in order, ignoring plurals: "chicken" is in "chicken thighs", "egg" not in "eggplant"."""
    words, wanted = _words(name), _words(term)
    if not wanted or not _stems(wanted[0]) & _all_stems(name):
        return False
    for start in range(len(words) - len(wanted) + 1):
        if all(_stems(w) & _stems(words[start + i]) for i, w in enumerate(wanted)):
            return True
    return False


def _terms(thing: str) -> set[str]:
    """The ingredient words meant by "red meat", "pork and shellfish", "coriander"."""
    out: set[str] = set()
    for part in _SPLIT.split(thing.strip()):
        part = re.sub(r"^(?:any|all|most|the|a|an|some|much|many|eating|food with|foods with)\s+", "", part).strip()
        part = re.sub(r"\s+(?:at all|anymore|any more|any longer|either|too|please|in (?:our|this|my|the) (?:house|home)"
                      r"|at home)$", "", part).strip()
        if not part:
            continue
        group = GROUP_NAMES.get(part) or GROUP_NAMES.get(part.removesuffix(" food"))
        if group:
            out |= set(GROUPS[group])
        elif len(part.split()) <= 3:
            out.add(part)
    return out


def _diet_terms(fact: str) -> set[str]:
    out: set[str] = set()
    for diet, groups in DIETS.items():
        for m in re.finditer(r"(?<![\w-])" + re.escape(diet) + r"(?![\w-])", fact):
            if _NEGATED.search(fact[: m.start()]):
                continue  # "I'm not vegetarian any more"
            for group in groups:
                out |= set(GROUPS[group])
    return out


def restrictions(facts: Iterable[str]) -> Restrictions:
    """The ingredient words the remembered facts rule out, and the facts that did."""
    avoided: set[str] = set()
    because: list[str] = []
    for fact in facts:
        said = _normal(str(fact))
        terms = _diet_terms(said)
        for m in _AVOIDING.finditer(said):
            terms |= _terms(m["what"])
        for m in _ALLERGY.finditer(said):
            terms |= _terms(m["what"])
        if terms:
            avoided |= terms
            because.append(str(fact))
    return Restrictions(frozenset(avoided), tuple(because))


def conflicts(recipe: Recipe, avoided: Iterable[str]) -> list[str]:
    """The recipe's ingredients and staples that contain an avoided word."""
    terms = list(avoided)
    return [name for name in (*recipe.ingredient_names, *recipe.pantry) if any(_contains(name, t) for t in terms)]


def fits(recipe: Recipe, avoided: Iterable[str]) -> bool:
    return not conflicts(recipe, avoided)


def recipe_for_diet(day: date, avoided: Sequence[str] | frozenset[str]) -> Recipe | None:
    """The day's recipe among those that fit: consecutive days still walk through
    every fitting recipe before one comes back. None when nothing fits."""
    terms = list(avoided)
    fitting = [r for r in ROTATION if fits(r, terms)] if terms else list(ROTATION)
    return fitting[day.toordinal() % len(fitting)] if fitting else None
