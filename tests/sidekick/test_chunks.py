"""The thing a clause is about (sidekick/planner/language/chunks.py), read from its grammar, not from lists
of the words around it: each family below is one shape of clause, with several fillers."""

from __future__ import annotations

import pytest

from dreamer.sidekick.planner.language.chunks import reads_as_clause, thing_of, things_of
from dreamer.sidekick.planner.language.values import tidy_items, tidy_text

THINGS = ["baby food pouches", "pop tarts", "lingonberry jam", "sukuma wiki", "decaf coffee", "boerewors"]

# A subject and a verb before the thing; an auxiliary; a state said with "out of" / "short of"; the thing
# as the subject; a time or place after it.
CLAUSES = [
    "can we get {t}",
    "it lacks {t} at home",
    "we have run short of {t}",
    "ugh out of {t} again",
    "I shall buy {t} on Monday",
    "I keep forgetting {t} every single time I go to the store",
    "kindly assist me to add {t}",
    "my mother-in-law is visiting so add {t}",
    "{t} has finished",
    "there's no {t} left",
]


@pytest.mark.parametrize("clause", CLAUSES)
@pytest.mark.parametrize("thing", THINGS)
def test_the_thing_of_a_clause_is_its_noun_phrase(clause: str, thing: str) -> None:
    text = clause.format(t=thing)
    assert reads_as_clause(text)
    assert thing_of(text) == thing
    assert tidy_items([text]) == [thing]


# Things that are no clause keep every word: participles and "-ing" words before a noun describe it, "of"
# and "n" join two nouns, a plural the lemma table knows only as a verb ("bars") is still a noun.
ITEMS = ["shredded cheese", "smoked salmon", "frozen peas", "baking soda", "cream of tartar", "mac n cheese",
         "granola bars", "a bag of rice", "salt and pepper", "low fat milk", "sparkling water", "chopped tomatoes"]


@pytest.mark.parametrize("item", ITEMS)
def test_a_thing_alone_is_no_clause_and_keeps_its_words(item: str) -> None:
    assert not reads_as_clause(item)
    assert tidy_text(item, item=True) == item


@pytest.mark.parametrize("item", ["shredded cheese", "smoked salmon", "granola bars", "chopped tomatoes"])
@pytest.mark.parametrize("clause", ["we need {t}", "can you get {t}", "I forgot {t} again"])
def test_a_described_thing_inside_a_clause_keeps_its_description(clause: str, item: str) -> None:
    assert thing_of(clause.format(t=item)) == item


@pytest.mark.parametrize("things", [["lettuce", "tomatoes"], ["mince", "pasta", "cheddar"], ["a dozen eggs"]])
@pytest.mark.parametrize("clause", ["we're low on {t}", "mi need {t}", "can you grab {t}"])
def test_things_listed_together_are_each_a_thing(clause: str, things: list[str]) -> None:
    listed = things[0] if len(things) == 1 else ", ".join(things[:-1]) + " and " + things[-1]
    assert tidy_items([clause.format(t=listed)]) == things


def test_a_clause_without_a_noun_phrase_has_no_thing() -> None:
    assert thing_of("we are going") is None and thing_of("it is finished") is None


@pytest.mark.parametrize("thing", ["bananas", "brinjal", "oat milk"])
@pytest.mark.parametrize("clause", ["{t} we've got heaps", "{t} I bought yesterday itself"])
def test_a_thing_said_first_with_a_clause_about_it_after(clause: str, thing: str) -> None:
    assert thing_of(clause.format(t=thing)) == thing


@pytest.mark.parametrize("thing", ["Milo", "pimento cheese"])
@pytest.mark.parametrize("clause", ["bro we literally have no {t}", "y'all we're plumb out of {t}",
                                    "FYI we're at zero {t}", "ag man, we need {t}"])
def test_whom_it_is_said_to_is_not_the_thing(clause: str, thing: str) -> None:
    assert tidy_items([clause.format(t=thing)]) == [thing]


@pytest.mark.parametrize("text", ["it after I get my double-double", "I'll grab it after I get my double-double",
                                  "Nana here. What", "supermarket now - what do"])
def test_a_fragment_or_a_clause_that_hangs_off_another_gives_no_thing(text: str) -> None:
    assert things_of(text) == []
