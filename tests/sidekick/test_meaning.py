"""Matching by meaning (issue 16 items 4-5, issue 17 item 4, issue 24 finding 10), on the starters' real specs.

Established agents keep their everyday phrases against later, example-poor or
look-alike agents; choices among agents name agent and publisher; requests of
other kinds make no call; modifiers anywhere in a request become arguments;
HR metric questions reach sql-explorer.ask whole, everyday counting does not.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from dreamer.sidekick.planner import OfflinePlanner, Plan, PlanContext, Tool
from sidekick_support import NOW, TZ

EARLY = "2026-11-01T09:00:00+00:00"  # the starters, installed with the kernel
LATER = "2026-12-01T09:00:00+00:00"  # an agent installed a month later
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


@pytest.fixture
def starters(tools: list[Tool]) -> list[Tool]:
    return [replace(t, installed_at=EARLY, publisher="dreamer") for t in tools]


def plan(text: str, tools: list[Tool]) -> Plan:
    return OfflinePlanner().plan(text, tools, PlanContext(now=NOW, timezone=TZ))


def steps(p: Plan) -> list[tuple[str, dict]]:
    return [(s.name, dict(s.args)) for s in p.steps]


def catch_all(installed_at: str) -> list[Tool]:
    return [
        Tool("jotter", "jot", "Keep a line of text.", TEXT, ("add {text}",), publisher="someone",
             installed_at=installed_at),
        Tool("jotter", "list_all", "List lines.", {"type": "object", "properties": {"text": {"type": "string"}}},
             ("list all {text}",), publisher="someone", installed_at=installed_at),
    ]


@pytest.mark.parametrize(("text", "owner"), [("add bread", "grocery.add_items"), ("list all my notes", "notes.")])
def test_an_example_poor_newcomer_does_not_take_everyday_phrases(starters: list[Tool], text: str, owner: str) -> None:
    got = plan(text, [*starters, *catch_all(LATER)])
    assert got.pending is None or got.pending.kind != "choose" or all(
        o.step.agent != "jotter" for o in got.pending.options[:1]), got
    assert got.steps and got.steps[0].name.startswith(owner), steps(got)


def test_a_look_alike_installed_later_does_not_take_over(starters: list[Tool]) -> None:
    copy = [replace(t, agent="grocery-plus", publisher="mallory", installed_at=LATER)
            for t in starters if t.agent == "grocery"]
    got = plan("add milk to my shopping list", [*starters, *copy])
    assert got.pending is None and steps(got) == [("grocery.add_items", {"items": ["milk"]})]


def test_choices_between_agents_name_the_agent_and_its_publisher(starters: list[Tool]) -> None:
    # Installed at the same time: neither is established, so the user chooses, and can tell them apart.
    copy = [replace(t, agent="grocery-plus", publisher="mallory") for t in starters if t.agent == "grocery"]
    got = plan("add milk to my shopping list", [*starters, *copy])
    assert got.pending is not None and got.pending.kind == "choose"
    labels = [o.label for o in got.pending.options]
    assert len(set(labels)) == len(labels) == 2
    assert any("grocery agent by dreamer" in label for label in labels)
    assert any("grocery-plus agent by mallory" in label for label in labels)


def test_a_clearly_more_specific_newcomer_wins(starters: list[Tool]) -> None:
    habits = Tool("habits", "log_habit", "Log a habit done today in the habit tracker.", TEXT,
                  ("log {text} in my habit tracker", "add {text} to my habit tracker"), publisher="someone",
                  installed_at=LATER)
    got = plan("add a 5k run to my habit tracker", [*starters, habits])
    assert steps(got) == [("habits.log_habit", {"text": "a 5k run"})]


@pytest.mark.parametrize("text", [
    "book me a flight to Paris", "turn on the lights", "what's the weather tomorrow?", "set a timer for 10 minutes",
    "play some music in the kitchen", "call a taxi to the station", "is it going to snow this weekend",
])
def test_requests_of_other_kinds_make_no_call(starters: list[Tool], text: str) -> None:
    got = plan(text, starters)
    assert not got.steps and got.pending is None and got.reply, steps(got)
    assert len(got.reply) < 200  # one or two sentences, not a dump of every function


@pytest.mark.parametrize(("text", "name", "args"), [
    ("plan a vegetarian dinner for tomorrow", "recipes.plan_dinner", {"day": "tomorrow", "diet": "vegetarian"}),
    ("suggest a vegetarian recipe with mushrooms", "recipes.suggest", {"ingredient": "mushrooms", "diet": "vegetarian"}),
    ("I want something italian to cook", "recipes.suggest", {"cuisine": "italian"}),
    ("am I busy today", "calendar.agenda", {"day": "today"}),
    ("any meetings tomorrow", "calendar.agenda", {"day": "tomorrow"}),
    ("read my groceries back to me", "grocery.list_items", {}),
    ("check milk off the shopping list", "grocery.remove_items", {"items": ["milk"]}),
])
def test_the_issues_misroutes(starters: list[Tool], text: str, name: str, args: dict) -> None:
    got = plan(text, starters)
    assert got.pending is None and steps(got) == [(name, args)], steps(got)


@pytest.mark.parametrize("question", [
    "how many people in sales took sick leave in October",
    "what is the average salary in Finance?",
    "how many employees in operations were absent last month?",
    "who has the highest salary?",
    "which department had the most absences in October?",
    "how many terminated employees do we have?",
])
def test_hr_questions_reach_the_sql_explorer_whole(starters: list[Tool], question: str) -> None:
    got = plan(question, starters)
    assert got.pending is None and len(got.steps) == 1 and got.steps[0].name == "sql-explorer.ask", steps(got)
    assert got.steps[0].args["question"] == question.rstrip("?")


@pytest.mark.parametrize("text", ["how many eggs do I need for pancakes", "how many items are on my grocery list",
                                  "how many notes do I have"])
def test_everyday_counting_is_no_hr_question(starters: list[Tool], text: str) -> None:
    got = plan(text, starters)
    options = [o.step.name for o in got.pending.options] if got.pending else []
    assert "sql-explorer.ask" not in [s.name for s in got.steps] + options, steps(got)
