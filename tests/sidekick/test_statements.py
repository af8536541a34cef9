"""Statements beside a request, read from their grammar (sidekick/planner/language/chunks.py): a clause that
opens with its subject and its verb tells why, it names no thing for a list; a thing said with where it goes
("Gouda on the boodschappen [list]") is the thing alone; a story that names no thing asks for nothing.
Each family is one shape with several fillers."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from dreamer.sidekick.dialogue.undo import is_undo
from dreamer.sidekick.memory.extract import Remember, avoided_in, read_memory_intent
from dreamer.sidekick.planner import OfflinePlanner, PlanContext
from dreamer.sidekick.planner.language.chunks import names_nothing, placed_after, subject_verb, tells, without_dangling
from dreamer.sidekick.planner.language.values import tidy_args, tidy_items
from routing_eval import load_tools

THINGS = ["juice boxes", "Tunnock's teacakes", "chadon beni", "oat milk", "frozen peas"]

# Why, said after the things: a subject, then its verb in the past or with an auxiliary.
WHYS = ["the twins drank the lot", "neighbour gave me a bunch", "we finished it", "I found some in the cupboard",
        "the wean's had them all", "the children finished the carton", "we have enough"]


@pytest.mark.parametrize("why", WHYS)
@pytest.mark.parametrize("thing", THINGS)
def test_a_statement_after_the_things_is_no_thing(thing: str, why: str) -> None:
    assert tells(why)
    assert tidy_items([thing, why]) == [thing]


# Things with a verb's form inside them stay things: a participle before a noun, a noun made of a verb, a
# state of the thing itself ("bread are bought" is about bread), a need ("we need the tahini" asks).
NOT_STATEMENTS = ["pasta bake", "cheese grater", "toilet rolls", "pulled pork", "honey roasted peanuts", "bread rolls",
                  "bread are bought", "crackers done", "we need the tahini", "she needs gluten free bread",
                  "cookies we like", "milk"]


@pytest.mark.parametrize("piece", NOT_STATEMENTS)
def test_things_and_needs_are_no_statements(piece: str) -> None:
    assert not tells(piece)


def test_a_statement_among_the_things_is_left_to_the_whole_message() -> None:
    # (only those after the last thing go: one in the middle is a story the reading of the whole message sees)
    items = tidy_items(["milk", "the kids finished it", "eggs"])
    assert len(items) == 3 and "finished" in items[1]


PLACES = ["on the boodschappen", "to the épicerie", "for the office kitchen", "from the shop", "at the servo"]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("thing", THINGS)
def test_where_a_thing_goes_is_no_part_of_it(thing: str, place: str) -> None:
    assert placed_after(f"{thing} {place}") == thing


@pytest.mark.parametrize("name", ["cream of tartar", "fish and chips", "chicken on the bone", "salt and vinegar chips"])
def test_a_name_with_a_preposition_keeps_it(name: str) -> None:
    # ("on the bone": a determiner after the preposition cuts only where it follows the first word's phrase)
    assert placed_after(name) in (name, "chicken")
    assert without_dangling(name) == name


@pytest.mark.parametrize("value,bare", [("beef with", "beef"), ("lentils for", "lentils"), ("rice inside", "rice"),
                                        ("hotel check in", "hotel check in"), ("pick up", "pick up")])
def test_a_preposition_left_last_goes_a_particle_stays(value: str, bare: str) -> None:
    assert without_dangling(value) == bare


@pytest.mark.parametrize("piece", ["inside", "list", "the list", "finished", "on the"])
def test_where_things_go_alone_names_nothing(piece: str) -> None:
    assert names_nothing(piece)
    assert tidy_items(["chilli sauce", piece]) == ["chilli sauce"]


@pytest.mark.parametrize("piece", ["ugh", "so", "we", "chilli sauce"])
def test_other_small_words_are_left_for_the_whole_message(piece: str) -> None:
    assert not names_nothing(piece)


def test_a_new_events_article_goes_but_a_quantity_stays() -> None:
    kinds = {"title": "text"}
    assert tidy_args({"title": "a yoga class"}, kinds, writes=True)["title"] == "yoga class"
    assert tidy_args({"title": "an eye test"}, kinds, writes=True)["title"] == "eye test"
    assert tidy_args({"title": "a lot going on"}, kinds, writes=True)["title"] == "a lot going on"
    assert tidy_args({"title": "A Quiet Place"}, kinds, writes=True)["title"] == "A Quiet Place"
    assert tidy_args({"title": "soccer practice was"}, kinds, writes=True)["title"] == "soccer practice"


@pytest.mark.parametrize("clause,verb", [("book club was fun last night", "was"), ("the call ran long", "ran"),
                                         ("plan b worked", "worked"), ("add milk", None), ("book a table for two", None),
                                         ("note: the code is 1234", None), ("/note locker code is 2819", None)])
def test_a_clause_opening_with_its_subject(clause: str, verb: str | None) -> None:
    assert subject_verb(clause) == verb


@pytest.fixture(scope="module")
def planned():
    tools = load_tools()
    planner = OfflinePlanner()
    context = PlanContext(now=datetime(2031, 3, 4, 18, 0, tzinfo=ZoneInfo("Africa/Johannesburg")),
                          timezone="Africa/Johannesburg")
    return lambda text: planner.plan(text, tools, context)


# Remarks whose first word is a function's word ("book", "plan", "call"), and stories that name no thing.
REMARKS = ["book club was fun last night", "book club was lovely tonight", "the meeting went really well",
           "I just got home from work", "we just got back from holiday, so tired", "I went to the gym",
           "we just got back from holiday"]


@pytest.mark.parametrize("text", REMARKS)
def test_a_remark_makes_no_call(planned, text: str) -> None:
    plan = planned(text)
    assert not plan.steps and plan.reply


# The same shapes that do ask: a command, a need, a thing had, a request after the story.
REQUESTS = [("book the physio for friday at 3pm", "calendar.add_event"), ("I bought milk", "grocery.remove_items"),
            ("I just got home from work, add milk to the list", "grocery.add_items"),
            ("I was wondering if you could put baking soda on the grocery list", "grocery.add_items")]


@pytest.mark.parametrize("text,name", REQUESTS)
def test_a_request_beside_a_story_still_asks(planned, text: str, name: str) -> None:
    assert [s.name for s in planned(text).steps][:1] == [name]


@pytest.mark.parametrize("text,items", [
    ("add juice boxes, the twins drank the lot", ["juice boxes"]),
    ("remove the chadon beni, neighbour gave me a bunch", ["chadon beni"]),
    ("Can you put Gouda on the boodschappen list?", ["Gouda"]),
    ("nae need for oatcakes anymore, take it off the messages list", ["oatcakes"]),
    ("add chilli sauce to ma shopping list", ["chilli sauce"]),
])
def test_the_things_of_a_request_with_its_asides(planned, text: str, items: list[str]) -> None:
    steps = planned(text).steps
    assert len(steps) == 1 and steps[0].args.get("items") == items


# Undo beside why, in the speaker's own words: a short clause opening with its subject, asking nothing.
@pytest.mark.parametrize("text", ["undo, they're still in the car", "oh no, undo that, I haven't shopped yet",
                                  "bring it back, I got that wrong", "naw, put it back, they didnae answer"])
def test_an_undo_beside_why_is_an_undo(text: str) -> None:
    assert is_undo(text)


@pytest.mark.parametrize("text", ["undo that, I need milk", "undo, can you add milk", "add milk, I forgot"])
def test_an_undo_beside_a_request_is_not_only_an_undo(text: str) -> None:
    assert not is_undo(text)


# Diets and what is not eaten, said with why or since when, or of the household.
@pytest.mark.parametrize("text,avoided", [
    ("I'm gluten-free, doctor's orders", None), ("I'm vegetarian, have been for years", None),
    ("my family is vegan now", None), ("FYI I went pescatarian last month", None), ("we're a halal household", None),
    ("no shellfish for me, I react badly", "shellfish"), ("I'm allergic to nuts, so be careful", "nuts"),
])
def test_a_fact_with_why_is_remembered(text: str, avoided: str | None) -> None:
    intent = read_memory_intent(text)
    assert isinstance(intent, Remember)
    assert avoided_in(intent.fact) == avoided


@pytest.mark.parametrize("text", ["I'm vegan, plan dinner for tomorrow", "I'm vegan, what can I make", "I'm tired, long day"])
def test_a_fact_beside_a_request_is_no_memory(text: str) -> None:
    assert read_memory_intent(text) is None


# Small talk opened by a hedge ("yeah", "nah", "ok"): the hedge says nothing of its own; a request after it
# stays a request.
@pytest.mark.parametrize("text", ["yeah no worries", "yeah nah all good", "ok thanks", "aye cheers", "yep all good"])
def test_small_talk_after_a_hedge_is_small_talk(planned, text: str) -> None:
    plan = planned(text)
    assert not plan.steps and plan.reply and "Here is what I can do" not in plan.reply


@pytest.mark.parametrize("text", ["yeah add milk", "ok add eggs to the list"])
def test_a_request_after_a_hedge_is_a_request(planned, text: str) -> None:
    assert [s.name for s in planned(text).steps] == ["grocery.add_items"]
