"""Ranking remembered facts against a question, and finding the fact a user names."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dreamer.kernel.memory.search import find, rank
from dreamer.kernel.memory.text import content_stems, stem


@dataclass(frozen=True)
class F:
    id: int
    text: str


FACTS = [
    F(1, "I live in Lyon"),
    F(2, "I'm vegetarian"),
    F(3, "My favourite cuisine is Thai"),
    F(4, "My wife's name is Anna"),
    F(5, "I am allergic to nuts"),
    F(6, "I work as a nurse"),
]


def order(question: str) -> list[int]:
    return [r.fact.id for r in rank(question, FACTS)]


def test_shared_words_come_first() -> None:
    assert order("Where does the user live?")[0] == 1
    assert order("What is the name of the user's wife?")[0] == 4
    assert order("Which cuisine does the user like?")[0] == 3
    assert order("Is the user allergic to anything?")[0] == 5


def test_a_topic_finds_facts_that_share_no_word_with_the_question() -> None:
    food = order("What does the user not eat or prefer for dinner?")
    # The diet, the allergy and the cuisine all come before where they live or work.
    assert set(food[:3]) == {2, 3, 5}
    assert food.index(1) > 2 and food.index(6) > 2
    assert order("What is the user's job?")[0] == 6


def test_every_fact_comes_back_and_limit_cuts() -> None:
    assert sorted(order("anything at all")) == [1, 2, 3, 4, 5, 6]
    assert len(rank("food", FACTS, limit=2)) == 2
    assert rank("food", []) == []


def test_ties_put_the_newest_first() -> None:
    same = [F(1, "I like tea"), F(2, "I like tea")]
    assert [r.fact.id for r in rank("coffee", same)] == [2, 1]


def test_stems() -> None:
    assert stem("allergies") == stem("allergy")
    assert stem("living") == stem("live") == stem("lives")
    assert stem("eating") == stem("eat")
    assert content_stems("What does the user eat?") == {"eat"}


@pytest.mark.parametrize(
    ("said", "ids"),
    [
        ("I live in Lyon", [1]),  # the same wording
        ("i LIVE in lyon.", [1]),
        ("I am vegetarian", [2]),  # a contraction spelled out
        ("I'm allergic to nuts", [5]),
        ("my favorite cuisine is thai", [3]),  # near enough
        ("Lyon", [1]),  # all its words are in the fact, and the fact has few more
        ("I eat", []),  # not "I don't eat pork"
        ("I live in Paris", []),
        ("", []),
    ],
)
def test_find_names_the_fact_the_user_means(said: str, ids: list[int]) -> None:
    facts = [*FACTS, F(7, "I don't eat pork")]
    assert [f.id for f in find(said, facts)] == ids


def test_find_returns_every_fact_that_fits_equally() -> None:
    facts = [F(1, "I live in Lyon with my cat"), F(2, "I live in Lyon with my dog")]
    assert [f.id for f in find("I live in Lyon with my", facts)] == [1, 2]
