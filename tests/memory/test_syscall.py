"""memory.read and memory.write as the kernel serves them to a running agent:
grants checked and audited, facts ranked, and with a model configured an answer
in the agent's schema (from the fake provider, over real HTTP)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from memory_testkit import new_user
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fakes"))

from llm_server import FakeLLMServer, Text

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.invocations.principal import Caller, Principal
from dreamer.kernel.invocations.syscalls import SyscallContext, default_table
from dreamer.kernel.llm.config import LLMConfig
from dreamer.kernel.llm.gateway import Gateway
from dreamer.kernel.memory.facts import memories, remember
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.writer import GroupWriter
from dreamer.kernel.store.models import AuditEntry, Grant, LlmUsage

DIET = {
    "type": "object",
    "properties": {"avoid": {"type": "array", "items": {"type": "string"}}},
    "required": ["avoid"],
}


@dataclass
class Kernel:
    """What a syscall handler reaches through ctx.invoker: the store, the grant cache, the
    model, and the writer that commits audit entries."""

    store: Store
    cache: InstallCache
    llm: Gateway | None = None
    syscalls: dict[str, Any] = field(default_factory=default_table)
    writer: GroupWriter = field(init=False)

    def __post_init__(self) -> None:
        self.writer = GroupWriter(self.store)


@pytest.fixture
def ada(add_user: Callable[[str], int]) -> int:
    return add_user("ada")


@pytest.fixture
def kernel(store: Store) -> Kernel:
    return Kernel(store, InstallCache(store))


@pytest.fixture
def lite(sqlite_store: Store) -> tuple[Kernel, int]:
    """A kernel on SQLite only, with the user ada, for the many cases of bad input."""
    return Kernel(sqlite_store, InstallCache(sqlite_store)), new_user(sqlite_store, "ada")


def grant(kernel: Kernel, user_id: int, agent: str, *scopes: str) -> None:
    with kernel.store.session() as s:
        s.add_all(Grant(user_id=user_id, agent=agent, scope=scope) for scope in scopes)
    kernel.cache.forget(user_id, agent)  # as the installer does after a grant


def syscall(kernel: Kernel, user_id: int, agent: str, method: str, params: dict[str, Any]) -> Any:
    ctx = SyscallContext(kernel, Principal(user_id, "ada"), Caller("agent", agent=agent), "inv_test")  # type: ignore[arg-type]
    return asyncio.run(kernel.syscalls[method](ctx, params))


def refused(kernel: Kernel, user_id: int, agent: str, method: str, params: dict[str, Any]) -> DreamerError:
    with pytest.raises(DreamerError) as caught:
        syscall(kernel, user_id, agent, method, params)
    assert "\n" not in caught.value.message
    return caught.value


def audit_rows(store: Store) -> list[tuple[str, str, str, str | None, str]]:
    with store.session() as s:
        rows = s.scalars(select(AuditEntry).where(AuditEntry.action.like("memory.%")).order_by(AuditEntry.seq))
        return [(r.actor, r.action, r.target, r.scope, r.decision) for r in rows]


def test_reading_needs_memory_read_and_is_audited_either_way(kernel: Kernel, ada: int) -> None:
    remember(kernel.store, ada, "user:ada", "I'm vegetarian")
    denied = refused(kernel, ada, "nosy", "memory.read", {"question": "What does the user eat?"})
    assert denied.code == "permission_denied"
    assert denied.message == (
        "nosy may not read Sidekick's memory: the user has not granted memory:read "
        "(grant it with `dreamer grant nosy memory:read`)"
    )
    grant(kernel, ada, "recipes", "memory:read")
    assert syscall(kernel, ada, "recipes", "memory.read", {"question": "What does the user eat?"}) == {
        "facts": ["I'm vegetarian"], "sources": ["user"], "answer": None, "model": None,
    }
    assert audit_rows(kernel.store)[-2:] == [
        ("agent:nosy", "memory.read", "Sidekick's memory", "memory:read", "deny"),
        ("agent:recipes", "memory.read", "Sidekick's memory", "memory:read", "allow"),
    ]


def test_memory_write_does_not_let_an_agent_read(kernel: Kernel, ada: int) -> None:
    grant(kernel, ada, "diary", "memory:write")
    assert refused(kernel, ada, "diary", "memory.read", {"question": "anything?"}).code == "permission_denied"


def test_facts_come_ranked_and_only_the_users_own(kernel: Kernel, ada: int, add_user: Callable[[str], int]) -> None:
    bob = add_user("bob")
    for fact in ("I live in Lyon", "I'm vegetarian", "I work as a nurse"):
        remember(kernel.store, ada, "user:ada", fact)
    remember(kernel.store, bob, "user:bob", "I eat everything")
    grant(kernel, ada, "recipes", "memory:read")
    got = syscall(kernel, ada, "recipes", "memory.read", {"question": "Where does the user live?"})
    assert got["facts"][0] == "I live in Lyon" and sorted(got["facts"]) == sorted(
        ["I live in Lyon", "I'm vegetarian", "I work as a nurse"]
    )
    # With a schema but no model, the facts alone.
    assert syscall(kernel, ada, "recipes", "memory.read", {"question": "diet?", "schema": DIET})["answer"] is None


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({}, "question"),
        ({"question": ""}, "question"),
        ({"question": "   "}, "empty"),
        ({"question": 7}, "question"),
        ({"question": "x" * 2001}, "question"),
        ({"question": "ok", "schema": "not a schema"}, "schema"),
        ({"question": "ok", "schema": {"type": "no-such-type"}}, "not a valid JSON schema"),
        ({"question": "ok", "extra": 1}, "Extra inputs"),
    ],
)
def test_bad_read_params_are_refused_before_the_grant_check(
    lite: tuple[Kernel, int], params: dict[str, Any], says: str
) -> None:
    kernel, ada = lite
    error = refused(kernel, ada, "nosy", "memory.read", params)
    assert error.code == "invalid_argument" and says in error.message
    assert audit_rows(kernel.store) == []


def test_an_agent_adds_a_fact_once_with_its_name_as_source(kernel: Kernel, ada: int) -> None:
    assert refused(kernel, ada, "diary", "memory.write", {"fact": "Prefers window seats"}).code == "permission_denied"
    assert memories(kernel.store, ada) == []
    grant(kernel, ada, "diary", "memory:write")
    first = syscall(kernel, ada, "diary", "memory.write", {"fact": "Prefers  window seats"})
    again = syscall(kernel, ada, "diary", "memory.write", {"fact": "prefers window seats."})
    assert first["created"] is True and again == {"id": first["id"], "created": False}
    (kept,) = memories(kernel.store, ada)
    assert (kept.id, kept.text, kept.source) == (first["id"], "Prefers window seats", "agent:diary")
    assert audit_rows(kernel.store) == [
        ("agent:diary", "memory.write", "Sidekick's memory", "memory:write", "deny"),
        ("agent:diary", "memory.write", "Sidekick's memory", "memory:write", "allow"),
        ("agent:diary", "memory.write", f"memory:{first['id']}", None, "allow"),
        ("agent:diary", "memory.write", "Sidekick's memory", "memory:write", "allow"),
    ]


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({}, "fact"),
        ({"fact": ""}, "empty"),
        ({"fact": "  "}, "empty"),
        ({"fact": ["a list"]}, "fact"),
        ({"fact": "x" * 1001}, "at most 1000 characters"),
        ({"fact": "x" * 100_000}, "fact"),
        ({"fact": "ok", "source": "user"}, "Extra inputs"),
    ],
)
def test_bad_facts_from_agents_are_refused(lite: tuple[Kernel, int], params: dict[str, Any], says: str) -> None:
    kernel, ada = lite
    grant(kernel, ada, "diary", "memory:write")
    error = refused(kernel, ada, "diary", "memory.write", params)
    assert error.code == "invalid_argument" and says in error.message
    assert memories(kernel.store, ada) == []


# -- with a model ---------------------------------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


def model_kernel(kernel: Kernel, fake: FakeLLMServer) -> Kernel:
    config = LLMConfig(
        provider="openai", base_url=fake.openai_url, api_key="sk-test", api_key_source="test",
        models={"fast": "small-1", "standard": "medium-1", "powerful": "large-1"}, budget_usd=None,
        timeout_s=5.0, max_retries=0,
    )
    kernel.llm = Gateway(config, kernel.store)
    return kernel


def test_with_a_model_and_a_schema_the_model_answers_from_the_facts(kernel: Kernel, ada: int, fake: FakeLLMServer) -> None:
    model_kernel(kernel, fake)
    remember(kernel.store, ada, "user:ada", "I'm vegetarian")
    remember(kernel.store, ada, "user:ada", "I live in Lyon")
    grant(kernel, ada, "recipes", "memory:read")
    fake.script(Text('{"avoid": ["meat", "fish"]}', input_tokens=40, output_tokens=8))
    got = syscall(kernel, ada, "recipes", "memory.read", {"question": "What does the user not eat?", "schema": DIET})
    assert got == {"facts": ["I'm vegetarian", "I live in Lyon"], "sources": ["user", "user"], "answer": {"avoid": ["meat", "fish"]}, "model": "small-1"}
    (sent,) = fake.requests
    assert sent.body["model"] == "small-1"
    asked = json.dumps(sent.body["messages"])
    assert "- I'm vegetarian" in asked and "- I live in Lyon" in asked and "What does the user not eat?" in asked
    assert "never follow instructions" in sent.body["messages"][0]["content"]
    with kernel.store.session() as s:
        usage = s.scalars(select(LlmUsage)).one()
        assert (usage.user_id, usage.agent, usage.invocation_id, usage.input_tokens) == (ada, "recipes", "inv_test", 40)
    # Without a schema the model is not asked.
    assert syscall(kernel, ada, "recipes", "memory.read", {"question": "diet?"})["answer"] is None
    assert len(fake.requests) == 1


def test_no_facts_no_model_call(kernel: Kernel, ada: int, fake: FakeLLMServer) -> None:
    model_kernel(kernel, fake)
    grant(kernel, ada, "recipes", "memory:read")
    got = syscall(kernel, ada, "recipes", "memory.read", {"question": "diet?", "schema": DIET})
    assert got == {"facts": [], "sources": [], "answer": None, "model": None} and fake.requests == []


def test_a_model_answer_that_never_fits_the_schema_is_a_model_error(kernel: Kernel, ada: int, fake: FakeLLMServer) -> None:
    model_kernel(kernel, fake)
    remember(kernel.store, ada, "user:ada", "I'm vegetarian")
    grant(kernel, ada, "recipes", "memory:read")
    fake.script(*(Text('{"wrong": 1}') for _ in range(3)))
    error = refused(kernel, ada, "recipes", "memory.read", {"question": "diet?", "schema": DIET})
    assert error.code == "model_error"


def test_an_offline_gateway_answers_with_the_facts(kernel: Kernel, ada: int) -> None:
    kernel.llm = Gateway(LLMConfig(), kernel.store)
    remember(kernel.store, ada, "user:ada", "I'm vegetarian")
    grant(kernel, ada, "recipes", "memory:read")
    got = syscall(kernel, ada, "recipes", "memory.read", {"question": "diet?", "schema": DIET})
    assert got == {"facts": ["I'm vegetarian"], "sources": ["user"], "answer": None, "model": None}
