"""A remembered preference fills a parameter that asks for it, only for an agent allowed to read memory
(issue 16 item 5): "I'm vegetarian" then "plan dinner" plans a vegetarian dinner, or says once what to grant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dreamer.kernel.memory.facts import remember
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Grant
from dreamer.sidekick.chat.preferences import apply_preferences
from dreamer.sidekick.planner import Step, Tool, tools_from_agents
from memory_testkit import new_user

TOOLS = Path(__file__).resolve().parents[1] / "sidekick" / "tools.json"


@pytest.fixture
def tools() -> dict[str, Tool]:
    return {t.name: t for t in tools_from_agents(json.loads(TOOLS.read_text()))}


def _grant(store: Store, user_id: int, agent: str, scope: str) -> None:
    with store.session() as s:
        s.add(Grant(user_id=user_id, agent=agent, scope=scope))


def test_a_granted_agent_gets_the_remembered_diet(sqlite_store: Store, tools: dict[str, Tool]) -> None:
    user = new_user(sqlite_store, "ada")
    remember(sqlite_store, user, "ada", "I'm vegetarian")
    _grant(sqlite_store, user, "recipes", "memory:read")
    got = apply_preferences(sqlite_store, user, [Step("recipes", "plan_dinner", {"day": "friday"})], tools, set())
    assert got.steps[0].args == {"day": "friday", "diet": "vegetarian"} and got.hints == ()


def test_without_the_grant_sidekick_says_once_what_to_run(sqlite_store: Store, tools: dict[str, Tool]) -> None:
    user = new_user(sqlite_store, "ada")
    remember(sqlite_store, user, "ada", "I'm vegan")
    hinted: set[str] = set()
    first = apply_preferences(sqlite_store, user, [Step("recipes", "plan_dinner", {})], tools, hinted)
    assert first.steps[0].args == {}  # the fact does not reach an agent the user did not allow to read it
    (hint,) = first.hints
    assert "`dreamer grant recipes memory:read`" in hint and "I'm vegan" in hint and "\n" not in hint
    again = apply_preferences(sqlite_store, user, [Step("recipes", "suggest", {})], tools, hinted)
    assert again.hints == ()  # once per conversation


def test_what_the_user_said_wins_and_agents_facts_never_fill(sqlite_store: Store, tools: dict[str, Tool]) -> None:
    user = new_user(sqlite_store, "ada")
    remember(sqlite_store, user, "agent:spammer", "The user is vegan", source="agent:spammer")
    _grant(sqlite_store, user, "recipes", "memory:read")
    said = apply_preferences(sqlite_store, user, [Step("recipes", "suggest", {"diet": "pescatarian"})], tools, set())
    assert said.steps[0].args == {"diet": "pescatarian"}
    unsaid = apply_preferences(sqlite_store, user, [Step("recipes", "suggest", {})], tools, set())
    assert unsaid.steps[0].args == {} and unsaid.hints == ()


def test_functions_without_such_a_parameter_are_left_alone(sqlite_store: Store, tools: dict[str, Tool]) -> None:
    user = new_user(sqlite_store, "ada")
    remember(sqlite_store, user, "ada", "I'm vegetarian")
    step = Step("grocery", "add_items", {"items": ["milk"]})
    assert apply_preferences(sqlite_store, user, [step], tools, set()).steps == (step,)


def test_a_fact_said_in_this_conversation_fills_the_call_and_says_how_to_keep_it(
    sqlite_store: Store, tools: dict[str, Tool]
) -> None:
    # "I'm vegetarian", then "any ideas with spinach?": the earlier sentence is part of the request.
    user = new_user(sqlite_store, "ada")
    told = remember(sqlite_store, user, "ada", "I'm vegetarian").fact
    older = remember(sqlite_store, user, "ada", "I'm vegan").fact  # said in another conversation
    hinted: set[str] = set()
    got = apply_preferences(sqlite_store, user, [Step("recipes", "suggest", {})], tools, hinted, lambda: {told.id})
    assert got.steps[0].args == {"diet": "vegetarian"}  # this conversation's fact, not the older one
    (hint,) = got.hints
    assert "`dreamer grant recipes memory:read`" in hint and "passed on" in hint
    again = apply_preferences(sqlite_store, user, [Step("recipes", "plan_dinner", {})], tools, hinted, lambda: {told.id})
    assert again.steps[0].args == {"diet": "vegetarian"} and again.hints == ()
    # Another conversation: the same facts are memory, which recipes may not read.
    elsewhere = apply_preferences(sqlite_store, user, [Step("recipes", "suggest", {})], tools, set(), frozenset)
    assert elsewhere.steps[0].args == {} and len(elsewhere.hints) == 1
    assert older.id != told.id


def test_another_users_fact_never_fills_a_call_even_by_its_id(sqlite_store: Store, tools: dict[str, Tool]) -> None:
    # said_here holds ids from this conversation; only the caller's own facts are ever read, so a
    # foreign id (another user's "I'm vegan") fills nothing and is never hinted at.
    mine = new_user(sqlite_store, "ada")
    theirs = new_user(sqlite_store, "bob")
    foreign = remember(sqlite_store, theirs, "bob", "I'm vegan").fact
    got = apply_preferences(sqlite_store, mine, [Step("recipes", "suggest", {})], tools, set(), lambda: {foreign.id})
    assert got.steps[0].args == {} and got.hints == ()
    # ... nor what another user does not eat (recipes' `avoid`), even granted memory:read
    allergy = remember(sqlite_store, theirs, "bob", "I'm allergic to peanuts").fact
    _grant(sqlite_store, mine, "recipes", "memory:read")
    avoided = apply_preferences(sqlite_store, mine, [Step("recipes", "plan_dinner", {})], tools, set(),
                                lambda: {allergy.id})
    assert avoided.steps[0].args == {} and avoided.hints == ()


def test_what_the_user_does_not_eat_reaches_a_parameter_that_takes_it(sqlite_store: Store, tools: dict[str, Tool]) -> None:
    # "I'm allergic to shellfish" said in this conversation, then "plan dinner": recipes' `avoid`
    # ("x-from-memory": "avoided") gets "shellfish"; a fact that avoids nothing adds nothing.
    user = new_user(sqlite_store, "ada")
    allergy = remember(sqlite_store, user, "ada", "My son is allergic to peanuts").fact
    place = remember(sqlite_store, user, "ada", "I live in Lyon").fact
    older = remember(sqlite_store, user, "ada", "I don't eat pork").fact  # said in another conversation
    got = apply_preferences(sqlite_store, user, [Step("recipes", "plan_dinner", {"day": "friday"})], tools, set(),
                            lambda: {allergy.id, place.id})
    assert got.steps[0].args == {"day": "friday", "avoid": "peanuts"}
    # Said in the request itself, it stays as said.
    said = apply_preferences(sqlite_store, user, [Step("recipes", "suggest", {"avoid": "mushrooms"})], tools, set(),
                             lambda: {allergy.id})
    assert said.steps[0].args == {"avoid": "mushrooms"}
    # Granted memory:read, every fact of the user's counts, this conversation's or not.
    _grant(sqlite_store, user, "recipes", "memory:read")
    granted = apply_preferences(sqlite_store, user, [Step("recipes", "suggest", {})], tools, set())
    assert set(granted.steps[0].args["avoid"].split(", ")) == {"peanuts", "pork"} and older.id != allergy.id
