"""An agent cannot flood or poison Sidekick's memory (issue 24, finding 8).

The real syscall handlers on a real store (tests/memory's harness): each fact keeps its
source; an agent's writes are capped per agent, for all agents and per minute; the
user's own facts are never refused because of agents' facts, and always come first
when facts are used, with their source.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))

from memory_testkit import new_user
from test_syscall import Kernel, grant, refused, syscall

from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.memory import syscall as memory_syscall
from dreamer.kernel.memory.facts import memories, remember
from dreamer.kernel.memory.store import MAX_AGENT_FACTS, MAX_FACTS_PER_AGENT
from dreamer.kernel.store.db import Store


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Kernel, int]:
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    # A fresh per-minute window for each test (the module keeps one per kernel process).
    monkeypatch.setattr(memory_syscall, "_WRITES", memory_syscall._Window(memory_syscall.WRITES_PER_MINUTE))
    kernel = Kernel(store, InstallCache(store))
    user = new_user(store, "ada")
    for agent in ("flooder", "other", "reader"):
        grant(kernel, user, agent, "memory:write", "memory:read")
    return kernel, user


def _write(kernel: Kernel, user: int, agent: str, fact: str) -> dict:
    return syscall(kernel, user, agent, "memory.write", {"fact": fact})


def test_writes_per_minute_are_limited_per_agent(site: tuple[Kernel, int]) -> None:
    kernel, user = site
    for i in range(memory_syscall.WRITES_PER_MINUTE):
        assert _write(kernel, user, "flooder", f"the user likes dish number {i}")["created"]
    error = refused(kernel, user, "flooder", "memory.write", {"fact": "the user likes dish number 999"})
    assert error.code == "rate_limited" and "flooder" in error.message
    assert _write(kernel, user, "other", "the user likes tea")["created"]  # another agent is not held up


def test_per_agent_and_all_agents_caps_never_take_the_users_room(site: tuple[Kernel, int], monkeypatch: pytest.MonkeyPatch) -> None:
    kernel, user = site
    monkeypatch.setattr(memory_syscall, "_WRITES", memory_syscall._Window(10_000))
    for i in range(MAX_FACTS_PER_AGENT):
        _write(kernel, user, "flooder", f"the user owns cat number {i}")
    error = refused(kernel, user, "flooder", "memory.write", {"fact": "the user owns cat number 100000"})
    assert error.code == "payload_too_large" and "flooder" in error.message
    for n in range(2, MAX_AGENT_FACTS // MAX_FACTS_PER_AGENT + 1):
        for i in range(MAX_FACTS_PER_AGENT):
            remember(kernel.store, user, f"agent:a{n}", f"agent {n} fact {i}", source=f"agent:a{n}", via="agent")
    error = refused(kernel, user, "other", "memory.write", {"fact": "one more"})
    assert "all agents together" in error.message
    # The user's own facts still go in.
    added = remember(kernel.store, user, "user:ada", "I am vegetarian", source="user")
    assert added.created and added.fact.source == "user"


def test_the_users_facts_outrank_agents_and_sources_are_shown(site: tuple[Kernel, int]) -> None:
    kernel, user = site
    _write(kernel, user, "flooder", "the user loves eating meat and bacon for dinner")
    _write(kernel, user, "flooder", "the user eats meat at dinner every day")
    remember(kernel.store, user, "user:ada", "I am vegetarian and eat no meat at dinner", source="user")
    read = syscall(kernel, user, "reader", "memory.read", {"question": "what does the user eat for dinner, meat?"})
    assert read["facts"][0] == "I am vegetarian and eat no meat at dinner"
    assert read["sources"][0] == "user" and set(read["sources"][1:]) == {"agent:flooder"}
    assert len(read["sources"]) == len(read["facts"])


def test_a_fact_the_user_also_says_becomes_theirs(site: tuple[Kernel, int]) -> None:
    kernel, user = site
    _write(kernel, user, "flooder", "I am allergic to peanuts")
    again = remember(kernel.store, user, "user:ada", "I'm allergic to peanuts", source="user")
    assert again.created is False and again.fact.source == "user"
    assert {f.source for f in memories(kernel.store, user)} == {"user"}
