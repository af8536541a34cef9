"""Sidekick's memory turns: telling it a fact, asking what it remembers, making it forget,
through the same Sidekick the kernel runs (no agent is involved, so none is installed)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from memory_testkit import new_user

from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.memory.facts import memories, remember
from dreamer.kernel.store.db import Store
from dreamer.sidekick.chat.conversations import conversation_view
from dreamer.sidekick.chat.sidekick import Sidekick
from dreamer.sidekick.memory.chat import memory_turn


@dataclass
class NoAgents:
    """The invoker Sidekick holds; a memory turn never calls an agent, so it must not be used."""

    llm: None = None

    async def invoke(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a memory turn called an agent")


@pytest.fixture
def who(sqlite_store: Store) -> Principal:
    return Principal(new_user(sqlite_store, "ada"), "ada")


def chat(store: Store, who: Principal, text: str, conversation: str | None = None) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        return [e async for e in Sidekick(store, NoAgents()).turn(who, text, conversation)]  # type: ignore[arg-type]

    return asyncio.run(run())


def test_telling_sidekick_a_fact_stores_it_and_calls_no_agent(sqlite_store: Store, who: Principal) -> None:
    events = chat(sqlite_store, who, "I'm vegetarian")
    assert [e["event"] for e in events] == ["start", "text", "done"]
    done = events[-1]
    assert done["reply"] == "I'll remember that you're vegetarian."
    assert done["calls"] == [] and done["pending"] is None
    assert done["memory"]["action"] == "remembered"
    (fact,) = memories(sqlite_store, who.user_id)
    assert (fact.text, fact.source) == ("I'm vegetarian", "user")
    # The turn is part of the conversation like any other.
    history = conversation_view(sqlite_store, who.user_id, done["conversation_id"])["messages"]
    assert [m["content"] for m in history] == ["I'm vegetarian", "I'll remember that you're vegetarian."]
    # Saying it again keeps one fact.
    again = chat(sqlite_store, who, "remember that I am vegetarian")[-1]
    assert again["reply"] == "I already remember that you're vegetarian." and len(memories(sqlite_store, who.user_id)) == 1


def test_a_request_is_not_a_memory(sqlite_store: Store, who: Principal) -> None:
    done = chat(sqlite_store, who, "add milk to my list")[-1]
    assert "memory" not in done and memories(sqlite_store, who.user_id) == []


def test_recall_lists_facts_with_ids_and_sources(sqlite_store: Store, who: Principal) -> None:
    empty = memory_turn(sqlite_store, who, "what do you remember about me?")
    assert empty is not None and empty.action == "listed" and "don't remember anything" in empty.reply
    mine = remember(sqlite_store, who.user_id, "user:ada", "I live in Lyon").fact
    theirs = remember(sqlite_store, who.user_id, "agent:travel", "Prefers aisle seats", source="agent:travel").fact
    listed = memory_turn(sqlite_store, who, "what do you remember about me?")
    assert listed is not None
    assert f"#{mine.id} I live in Lyon" in listed.reply
    assert f"#{theirs.id} Prefers aisle seats (noted by travel)" in listed.reply
    assert [m["id"] for m in listed.memories] == [mine.id, theirs.id]


def test_forget_by_what_was_said_and_by_id(sqlite_store: Store, who: Principal) -> None:
    lyon = remember(sqlite_store, who.user_id, "user:ada", "I live in Lyon").fact
    veg = remember(sqlite_store, who.user_id, "user:ada", "I'm vegetarian").fact
    unknown = memory_turn(sqlite_store, who, "forget that I live in Paris")
    assert unknown is not None and unknown.action == "not_found"
    assert unknown.reply.startswith("I don't remember that you live in Paris.")
    gone = memory_turn(sqlite_store, who, "forget that I live in Lyon")
    assert gone is not None and (gone.action, gone.reply) == ("forgotten", "I've forgotten that you live in Lyon.")
    assert [f.id for f in memories(sqlite_store, who.user_id)] == [veg.id]
    by_id = memory_turn(sqlite_store, who, f"forget memory {veg.id}")
    assert by_id is not None and by_id.action == "forgotten" and memories(sqlite_store, who.user_id) == []
    missing = memory_turn(sqlite_store, who, f"forget memory {lyon.id}")
    assert missing is not None and missing.action == "not_found" and f"no memory {lyon.id}" in missing.reply


def test_forgetting_one_of_several_that_fit_asks_which(sqlite_store: Store, who: Principal) -> None:
    cat = remember(sqlite_store, who.user_id, "user:ada", "I live in Lyon with my cat").fact
    dog = remember(sqlite_store, who.user_id, "user:ada", "I live in Lyon with my dog").fact
    asked = memory_turn(sqlite_store, who, "forget that I live in Lyon with my")
    assert asked is not None and asked.action == "ambiguous"
    assert f"#{cat.id}" in asked.reply and f"#{dog.id}" in asked.reply
    assert len(memories(sqlite_store, who.user_id)) == 2


def test_another_users_memory_cannot_be_forgotten(sqlite_store: Store, who: Principal) -> None:
    bob = new_user(sqlite_store, "bob")
    theirs = remember(sqlite_store, bob, "user:bob", "I live in Oslo").fact
    turn = memory_turn(sqlite_store, who, f"forget memory {theirs.id}")
    assert turn is not None and turn.action == "not_found"
    assert memory_turn(sqlite_store, who, "forget that I live in Oslo").action == "not_found"  # type: ignore[union-attr]
    assert len(memories(sqlite_store, bob)) == 1
