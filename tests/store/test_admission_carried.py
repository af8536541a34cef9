"""Decision 0057: a call an agent makes before its own admission is written carries that
admission in its own first transaction, and grants.check is answered without waiting for it.

Still nothing is said before it is durable: the nested call's answer (or refusal) comes back
to the calling agent only once its caller's admission is committed, the caller's entry comes
first in the audit log, and the caller's bound holds for both.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from collections.abc import Callable, Coroutine
from typing import Any

import test_admission_durable as durable

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.invoker import Invoker
from dreamer.kernel.invocations.principal import Caller, Principal
from dreamer.kernel.store.db import Store

PLAN = [("functions.call", "notes.plan", "allow"), ("agents.call", "lists.add", "allow")]


class _Cache(durable._Cache):
    """Two installed agents, notes and lists; notes holds agent:lists unless `granted` is False."""

    granted = True

    def agent(self, user_id: int, agent: str) -> Any:
        if agent not in ("notes", "lists"):
            return None
        spec = SimpleNamespace(exported=True, confirm=False, background=False, retries=0)
        return SimpleNamespace(
            name=agent, bundle_path=Path("/nonexistent"), manifest=SimpleNamespace(asked_limits=None),
            digest="", function=lambda name: spec, required=["agent:lists"] if agent == "notes" else [], optional=[],
        )

    def grants(self, user_id: int, agent: str) -> frozenset[str]:
        return frozenset({"agent:lists"}) if agent == "notes" and self.granted else frozenset()


class _Worker:
    """notes.plan makes the syscalls in `first`, then calls lists.add; lists.add answers (once released)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.first: list[tuple[str, dict[str, Any]]] = []
        self.answers: list[Any] = []  # what each syscall of notes.plan answered (or the refusal's code)
        self.audit_after_call: list[list[tuple[str, str, str]]] = []  # the log when lists.add's answer came
        self.inner_ran = asyncio.Event()
        self.release: asyncio.Event | None = None

    async def request(self, method: str, params: dict[str, Any], *, syscalls: Any, **_: Any) -> dict[str, Any]:
        if params["function"] != "plan":
            self.inner_ran.set()
            if self.release is not None:
                await self.release.wait()
            return {"value": "added"}
        for name, args in [*self.first, ("agents.call", {"agent": "lists", "function": "add", "args": {}})]:
            try:
                self.answers.append(await syscalls(name, args))
            except DreamerError as exc:
                self.answers.append(exc.code)
        self.audit_after_call.append(durable._audit(self.store))
        return {"value": "planned"}

    def kill(self) -> None:  # pragma: no cover - the disk watch never starts in these tests
        pass


def _world(store: Store, tmp_path: Path) -> tuple[Invoker, _Worker, Principal]:
    return durable._world(store, tmp_path, _Worker(store), _Cache(store))


def _run(invoker: Invoker, main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    try:
        return asyncio.run(main())
    finally:
        invoker.writer.close()


def _plan(invoker: Invoker, ada: Principal) -> Any:
    return invoker.invoke(ada, "notes", "plan", {}, Caller("user"))


def test_a_call_made_before_the_callers_admission_is_written_carries_it(store: Store, tmp_path: Path) -> None:
    invoker, worker, ada = _world(store, tmp_path)

    async def main() -> int:
        await _plan(invoker, ada)  # the writer's first use
        before = invoker.writer.batches
        outcome = await _plan(invoker, ada)
        assert outcome.value == "planned"
        return invoker.writer.batches - before

    # The caller's admission with the callee's admission and end, then the caller's end
    # (three before 0057: the caller's admission was written alone at the syscall).
    assert _run(invoker, main) == 2
    assert durable._audit(store) == PLAN * 2
    assert sorted(durable._invocations(store)) == [("add", "succeeded")] * 2 + [("plan", "succeeded")] * 2
    assert worker.audit_after_call == [PLAN, PLAN * 2]


def test_the_nested_answer_waits_for_the_callers_admission(store: Store, tmp_path: Path) -> None:
    invoker, worker, ada = _world(store, tmp_path)

    async def main() -> None:
        gate = durable._hold(invoker.writer)
        call = asyncio.ensure_future(_plan(invoker, ada))
        await asyncio.wait_for(worker.inner_ran.wait(), 5)
        assert not await durable._settles_within(call, 0.3)
        assert worker.answers == [] and durable._audit(store) == []
        gate.set()
        assert (await asyncio.wait_for(call, 10)).value == "planned"

    _run(invoker, main)
    # Read by the calling agent's worker the moment lists.add's answer reached it.
    assert worker.audit_after_call == [PLAN]


def test_a_refused_nested_call_has_its_callers_admission_on_record_first(store: Store, tmp_path: Path) -> None:
    invoker, worker, ada = _world(store, tmp_path)
    invoker.cache.granted = False  # type: ignore[attr-defined]

    async def main() -> None:
        assert (await _plan(invoker, ada)).value == "planned"

    _run(invoker, main)
    assert worker.answers == ["permission_denied"]
    refused = [("functions.call", "notes.plan", "allow"), ("agents.call", "lists.add", "deny")]
    assert worker.audit_after_call == [refused]
    assert durable._invocations(store) == [("plan", "succeeded")]


def test_an_invalid_nested_call_is_refused_once_its_callers_admission_is_on_record(
    store: Store, tmp_path: Path
) -> None:
    invoker, worker, ada = _world(store, tmp_path)
    # Refused before any admission of its own (not an agent function name): nothing carries the caller's.
    worker.first = [("agents.call", {"agent": "Not An Agent", "function": "add"})]

    async def main() -> None:
        gate = durable._hold(invoker.writer)
        call = asyncio.ensure_future(_plan(invoker, ada))
        assert not await durable._settles_within(call, 0.3)
        assert worker.answers == []
        gate.set()
        await asyncio.wait_for(call, 10)

    _run(invoker, main)
    assert worker.answers[0] == "invalid_argument"
    assert worker.answers[1]["value"] == "added"  # the next call: the caller's admission is on record already
    assert worker.audit_after_call == [PLAN]


def test_grants_check_is_answered_before_the_admission_and_the_next_call_still_carries_it(
    store: Store, tmp_path: Path
) -> None:
    invoker, worker, ada = _world(store, tmp_path)
    worker.first = [("grants.check", {"scope": "agent:lists"})]

    async def main() -> None:
        gate = durable._hold(invoker.writer)
        call = asyncio.ensure_future(_plan(invoker, ada))
        await asyncio.wait_for(worker.inner_ran.wait(), 5)
        # Answered while nothing could be written: it reads the agent's own grants and writes nothing.
        assert worker.answers == [{"granted": True, "by": "agent:lists"}]
        assert durable._audit(store) == []
        gate.set()
        await asyncio.wait_for(call, 10)
        before = invoker.writer.batches
        await _plan(invoker, ada)
        assert invoker.writer.batches - before == 2

    _run(invoker, main)
    assert durable._audit(store) == PLAN * 2


def test_a_nested_call_that_outlasts_the_callers_bound_has_both_admissions_on_record(
    store: Store, tmp_path: Path
) -> None:
    invoker, worker, ada = _world(store, tmp_path)
    worker.release = asyncio.Event()

    async def main() -> None:
        call = asyncio.ensure_future(_plan(invoker, ada))
        await asyncio.wait_for(worker.inner_ran.wait(), 5)
        for _ in range(500):  # the bound (20 ms from the caller's admission) is far shorter than these 5 s
            if durable._audit(store):
                break
            await asyncio.sleep(0.01)
        assert not call.done()
        assert durable._audit(store) == PLAN
        assert sorted(durable._invocations(store)) == [("add", "running"), ("plan", "running")]
        worker.release.set()  # type: ignore[union-attr]
        await asyncio.wait_for(call, 10)

    _run(invoker, main)
    assert sorted(durable._invocations(store)) == [("add", "succeeded"), ("plan", "succeeded")]
