"""Recipe suggestions from the built-in catalog, and a dinner planner.

plan_dinner is deterministic: the same day always gives the same recipe, and
consecutive days walk through the whole catalog before any recipe comes back.
Ingredients go on the grocery list through the kernel (the grant
agent:grocery.add_items), never by touching the grocery agent's data.
"""

from __future__ import annotations

import difflib
import re

from typing import Annotated

from pydantic import Field

from dreamer.sdk import CallError, Context, InvalidArgument, NotAvailable, function

from .catalog import RECIPES, Recipe
from .days import resolve_day, today_in, zone
from .diet import DIETS, Restrictions, fits, recipe_for_diet, restrictions


class BadRequest(InvalidArgument, ValueError):
    """Input a function refuses: the caller gets kind invalid_argument and this one sentence."""


MAX_TEXT = 100
CUISINES: tuple[str, ...] = tuple(sorted({recipe.cuisine for recipe in RECIPES}))
DIET_NAMES: tuple[str, ...] = tuple(DIETS)
# Typical values (JSON schema "examples", no restriction): Sidekick fills the parameter when the
# user says one anywhere ("plan a vegetarian dinner"). "x-from-memory": what the user told
# Sidekick ("I'm vegetarian") may fill it too, when this agent is granted memory:read.
Cuisine = Annotated[str | None, Field(examples=[c.lower() for c in CUISINES])]
Diet = Annotated[str | None, Field(examples=list(DIET_NAMES), json_schema_extra={"x-from-memory": True})]
# What the user does not eat, in their words ("pork", "meat or fish", "shellfish"): said in the request
# ("plan dinner without pork"), or passed on by Sidekick from what the user told it ("x-from-memory":
# "avoided": "I'm allergic to shellfish" said earlier in the conversation).
Avoid = Annotated[str | None, Field(examples=["pork", "meat or fish", "shellfish", "nuts"],
                                    json_schema_extra={"x-from-memory": "avoided"})]

# Other names people use for what the catalog calls something else.
_ALIASES: dict[str, tuple[str, ...]] = {
    "prawn": ("shrimp",),
    "cilantro": ("coriander",),
    "aubergine": ("eggplant",),
    "courgette": ("zucchini",),
    "garbanzo": ("chickpea",),
    "scallion": ("spring", "onion"),
    "capsicum": ("bell", "pepper"),
}

def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+", text.casefold())


def _stems(word: str) -> set[str]:
    """The word and its plausible singulars, so "tomatoes" meets "tomato" and "chilies" meets "chili"."""
    stems = {word}
    if word.endswith("ies"):
        stems |= {word[:-3] + "y", word[:-3] + "i"}
    if word.endswith("es"):
        stems.add(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        stems.add(word[:-1])
    return stems


def _query_words(text: str) -> list[str]:
    out: list[str] = []
    for word in _words(text):
        alias = next((_ALIASES[s] for s in _stems(word) if s in _ALIASES), None)
        out.extend(alias or (word,))
    return out


def _contains(ingredient: str, query: list[str]) -> bool:
    """Whole words in order, so "chicken" finds "chicken thighs" but "egg" does not find "eggplant"."""
    words = _words(ingredient)
    for start in range(len(words) - len(query) + 1):
        if all(_stems(q) & _stems(words[start + i]) for i, q in enumerate(query)):
            return True
    return False


def _text(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"The {what} must be text.")
    value = " ".join(value.split())
    if len(value) > MAX_TEXT:
        raise BadRequest(f"The {what} can be at most {MAX_TEXT} characters long.")
    return value or None


def _cuisine(value: str) -> str:
    wanted = " ".join(_words(value))
    for cuisine in CUISINES:
        if " ".join(_words(cuisine)) == wanted:
            return cuisine
    # "italian tonight", "something thai": the one cuisine the words name, with words around it.
    named = [c for c in CUISINES if f" {' '.join(_words(c))} " in f" {wanted} "]
    if len(named) == 1:
        return named[0]
    raise BadRequest(f"There are no {value} recipes in the catalog; the cuisines are: {', '.join(CUISINES)}.")


@function(
    exported=True,
    reads=True,
    reply=["Some ideas: {recipes.*.name}.", "{!recipes}No recipe in the catalog fits that; try fewer conditions."],
    examples=[
        "suggest a recipe with {ingredient}",
        "what can I cook with {ingredient}",
        "recipes with {ingredient}",
        "give me a {cuisine} recipe",
        "something {cuisine} for dinner",
        "a recipe that takes less than {max_minutes} minutes",
        "a quick {cuisine} dinner under {max_minutes} minutes",
        "what can I make with {ingredient} in {max_minutes} minutes",
        "(suggest|recommend) [a|some] (recipe|recipes|dinner) with {ingredient}",
        "what (can|could|should) I (cook|make) with {ingredient}",
        "dinner ideas with {ingredient}",
        "recipe ideas (with|using) {ingredient}",
        "(craving|in the mood for) {cuisine} [food] [tonight], give me (options|ideas|some ideas)",
        "what's a good (dinner|meal|recipe) with {ingredient}",
        "[a|some] {cuisine} (recipe|recipes)",
        "[a|some] quick (recipe|recipes|dinner) under {max_minutes} minutes",
        "something (quick|fast) with {ingredient}",
        "suggest a recipe",
        "I (want|fancy|feel like) something {cuisine} to (cook|eat|make)",
        "(any|some) {cuisine} (dinner|recipe|food) ideas",
        "(recommend|suggest) something with {ingredient}",
        "what (dish|meal) can I make with {ingredient}",
        # recipes in the plural are a choice to make: "show me recipes using X"
        "(show|give) [me] (some|a few) recipes (with|using) {ingredient}",
        "show [me] recipes (with|using) {ingredient}", "find [me] a recipe (with|using) {ingredient}",
        "[any] recipe ideas for {ingredient}",
        "(give|find|show) me something to (cook|make) with {ingredient}",
        "what can I make for dinner with {ingredient}",
        "what (can|could) I (cook|make) with {ingredient} for dinner",
        # what to do with an ingredient, in so many words: "what could I do with spinach", "any ideas what to do with chicken"
        "what could I do with {ingredient}", "[any] ideas [for] what to (do|make|cook) with {ingredient}",
    ],
)
def suggest(
    ctx: Context,
    ingredient: str | None = None,
    cuisine: Cuisine = None,
    max_minutes: int | None = None,
    diet: Diet = None,
    avoid: Avoid = None,
) -> dict:
    """Suggest recipes from the catalog, optionally by ingredient, cuisine, time and diet.

    The ingredient matches whole words inside ingredient names ("chicken" finds
    "chicken thighs"); the cuisine is one of the catalog's cuisines; max_minutes
    is the most time the recipe may take; diet (vegetarian, vegan, gluten-free,
    ...) leaves out recipes it rules out. Matches come quickest first.
    """
    ingredient = _text(ingredient, "ingredient")
    wanted_cuisine = _text(cuisine, "cuisine")
    matched_cuisine = _cuisine(wanted_cuisine) if wanted_cuisine else None
    if max_minutes is not None:
        if isinstance(max_minutes, bool) or not isinstance(max_minutes, int):
            raise BadRequest("max_minutes must be a whole number of minutes.")
        if max_minutes < 1:
            raise BadRequest("max_minutes must be at least 1 minute.")
    query = _query_words(ingredient) if ingredient else []
    if ingredient and not query:
        raise BadRequest(f"{ingredient!r} is not an ingredient name; try a word such as 'chicken'.")

    avoided = _diet(diet).avoided | _avoiding(avoid).avoided
    def fitting(by_name: bool) -> list[Recipe]:
        return [
            recipe
            for recipe in RECIPES
            if (matched_cuisine is None or recipe.cuisine == matched_cuisine)
            and (not avoided or fits(recipe, avoided))
            and (max_minutes is None or recipe.minutes <= max_minutes)
            and (not query or (_contains(recipe.name, query) if by_name
                               else any(_contains(name, query) for name in recipe.ingredient_names)))
        ]

    found = fitting(by_name=False)
    if query and not found:
        # No ingredient by that name, but a dish is: "bibimbap recipe" asked as ideas with bibimbap is that dish.
        found = fitting(by_name=True)
    found.sort(key=lambda r: (r.minutes, r.name))
    ctx.log("suggested recipes", matches=len(found))
    return {
        "recipes": [recipe.summary() for recipe in found],
        "count": len(found),
        "criteria": {"ingredient": ingredient, "cuisine": matched_cuisine, "max_minutes": max_minutes,
                     "diet": _diet_name(diet)},
    }


@function(
    exported=True,
    reads=True,
    reply=["{name} ({cuisine}, {minutes} minutes, serves {serves}).", "Ingredients:{quantities:lines}",
           "Steps:{steps:numbered}"],
    examples=[
        "how do I make {name}",
        "show me the recipe for {name}",
        "recipe for {name}",
        "how do you cook {name}",
        "how (do I|to|do you|can I) (make|cook) {name}",
        "[what's] the recipe for {name}",
        "give me the recipe for {name}",
        "instructions for [making] {name}",
        "how (is|are) {name} made",
        # "the X recipe" names one recipe
        "(open|find|show|get) [me] the {name} recipe",
        "what are the (steps|ingredients) (for|of) {name}",
        "what ingredients (do I need|are) (for|in) {name}",
        "[the] steps to (make|cook) {name}", "what goes (in|into) [a|an] {name}",
        "(share|send) [me] [the] {name} recipe", "teach me how to (cook|make) {name}",
        "what do I need for [a|an] {name}", "walk me through [making|how to make] {name}",
        "get the recipe for {name}",
        # what people ask of one dish in other words: "pull up the
        # recipe for coq au vin", "walk me through making shakshuka", "the recipe of beef pho" (not "what's
        # in X" or "what do I need for X": "what's in my wallet" and "what do I need for my passport" are
        # no dishes, and "what do I need to cook X" reads as "I want to cook something with salmon")
        "(pull|bring) up the (recipe|method) for {name}", "walk me through (making|cooking|the recipe for) {name}",
        "[the] recipe of {name}", "{name}, (ingredients|steps|method) and (method|steps|ingredients)",
        # one dish's recipe asked for with "of" or without an article (Indian and second-language
        # English): "give me recipe of aloo paratha", "send the recipe of rajma"
        "(give|send|tell|share) [me] [the|a] recipe (of|for) {name}",
        "how do (I|you|we) (make|cook|prepare) {name} then",
    ],
)
def get_recipe(ctx: Context, name: str) -> dict:
    """Show one recipe in full: quantities, pantry staples and steps.

    The name is matched without regard to case; part of a name works when it
    names just one recipe ("carbonara").
    """
    wanted = " ".join(_words(_text(name, "recipe name") or ""))
    if not wanted:
        raise BadRequest("Name the recipe you want, for example 'Pad Thai'.")
    names = {" ".join(_words(recipe.name)): recipe for recipe in RECIPES}
    if wanted in names:
        return names[wanted].full()
    partial = [recipe for key, recipe in names.items() if wanted in key]
    if len(partial) == 1:
        return partial[0].full()
    if partial:
        listed = ", ".join(recipe.name for recipe in partial)
        raise BadRequest(f"{name!r} matches several recipes ({listed}); say which one.")
    # The other way round: the words asked for hold one recipe's whole name, with words around it
    # ("bibimbap recipe", "tom yum soup actually", "the mapo tofu one"). The longest such name wins.
    held = sorted((key for key in names if f" {key} " in f" {wanted} "), key=len, reverse=True)
    if held and (len(held) == 1 or len(held[0]) > len(held[1])) and len(held[0].split()) * 3 >= len(wanted.split()):
        return names[held[0]].full()
    close = difflib.get_close_matches(wanted, list(names), n=3, cutoff=0.6)
    hint = f" Did you mean {' or '.join(names[key].name for key in close)}?" if close else ""
    raise BadRequest(f"There is no recipe called {name!r} in the catalog.{hint}")


@function(
    exported=True,
    undo=False,  # its grocery items are another agent's: "remove the X" takes them off
    undo_hint=['Its ingredients are on your grocery list now: say "remove {added} from my grocery list" to take '
               "them off.", "{!added}It put nothing on your grocery list, so there is nothing to take off."],
    reply=["Dinner for {weekday}: {recipe.name} ({recipe.minutes} minutes).", "Keeping to: {respecting}.",
           "Added {added} to your grocery list.", "Already on your list: {already_there}."],
    examples=[
        "plan dinner for {day}",
        "what's for dinner {day}",
        "what should I cook {day}",
        "plan {day}'s dinner",
        "plan dinner",
        "what's for dinner",
        "plan (dinner|supper) [for] {day}",
        "what's for dinner [on] {day}",
        "what should (I|we) (cook|eat|have) [for dinner] {day}",
        "pick [a] dinner for {day}",
        "(plan|pick) a {diet} dinner [for] {day}",
        "what (should|can) (I|we) have for dinner {day}",
        "(meal|dinner) plan for {day}",
        "(help me|make a) plan [for] dinner [for] {day}",
        "(sort|sort out|choose|pick) [a] dinner for {day}",
    ],
)
def plan_dinner(ctx: Context, day: str = "today", add_to_grocery_list: bool = True, diet: Diet = None,
                avoid: Avoid = None) -> dict:
    """Pick dinner for a day and, unless told not to, put its ingredients on the grocery list.

    The day is "today", "tomorrow", a weekday ("friday" is the coming one, today
    included; "next friday" the first after today) or a date like 2025-03-14, in
    the user's timezone. The same day always gets the same recipe. Pantry staples (salt,
    oil, flour, ...) are not added to the list. With the grant memory:read, what
    the user told Sidekick ("I'm vegetarian", "I don't eat pork", "I'm allergic
    to nuts") rules out the recipes that do not fit; so does a diet named in the
    request (vegetarian, vegan, gluten-free, ...), and what to avoid ("pork", "shellfish").
    """
    tz, tz_name = zone(getattr(ctx.user, "timezone", None))
    try:
        when = resolve_day(day, today_in(tz))
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    remembered = _remembered_diet(ctx)
    asked, avoiding = _diet(diet), _avoiding(avoid)
    diet_rules = Restrictions(remembered.avoided | asked.avoided | avoiding.avoided,
                              (*remembered.because, *asked.because, *avoiding.because))
    recipe = recipe_for_diet(when, diet_rules.avoided)
    if recipe is None:
        raise BadRequest(
            "No recipe in the catalog fits what you asked for (" + "; ".join(diet_rules.because) + ")."
        )
    result: dict = {
        "date": when.isoformat(),
        "weekday": when.strftime("%A"),
        "timezone": tz_name,
        "recipe": recipe.full(),
        "respecting": list(diet_rules.because),
        "added_to_grocery_list": False,
        "added": [],
        "already_there": [],
    }
    if add_to_grocery_list:
        # A failure (say, the grant was revoked) propagates: the user must hear why nothing was added.
        grocery = ctx.call("grocery", "add_items", items=recipe.ingredient_names)
        result["added_to_grocery_list"] = True
        result["added"] = list(grocery.get("added", []))
        result["already_there"] = list(grocery.get("already_there", []))
    ctx.log("planned dinner", date=result["date"], recipe=recipe.name, added=len(result["added"]))
    return result


def _diet_name(diet: str | None) -> str | None:
    wanted = " ".join((_text(diet, "diet") or "").casefold().replace("-", " ").split())
    if not wanted:
        return None
    for name in DIET_NAMES:
        if name.replace("-", " ") == wanted:
            return name
    raise BadRequest(f"I don't know the diet {diet!r}; say one of: {', '.join(DIET_NAMES)}.")


def _avoiding(avoid: str | None) -> Restrictions:
    """What the user asked to leave out ("pork", "meat or fish"), read as "I don't eat ..."."""
    said = _text(avoid, "avoid")
    return restrictions([f"I don't eat {said}"]) if said else restrictions([])


def _diet(diet: str | None) -> Restrictions:
    """What a diet named in the request rules out ("vegetarian": meat and seafood)."""
    name = _diet_name(diet)
    if name is None:
        return restrictions([])
    return restrictions([f"I am {name}"])


def _remembered_diet(ctx: Context) -> Restrictions:
    """What Sidekick remembers that rules recipes out. memory:read is optional: without
    it (or without a kernel that keeps a memory) dinner is planned as before."""
    try:
        if not ctx.granted("memory:read"):
            return restrictions([])
        facts = ctx.sidekick("What does the user not eat or prefer for dinner?")
    except (CallError, NotAvailable) as exc:
        ctx.log("planning without Sidekick's memory", level="debug", kind=exc.kind)
        return restrictions([])
    return restrictions(f for f in facts if isinstance(f, str)) if isinstance(facts, list) else restrictions([])
