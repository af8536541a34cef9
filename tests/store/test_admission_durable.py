"""Decision 0051: an allowed call's admission is queued, not awaited, and runs alongside the
call; still, nothing is said before it is durable. The answer (and any syscall the worker
makes) waits for the admission's commit, and a refusal is committed before it is raised.

The writer thread is held on a gate, so every commit waits: the call runs, and its answer
must not come back until the gate opens and the audit row is in the store.

Decision 0053: a short call's admission is written in one transaction with its end; one
that outlasts the bound, or makes a syscall, has it written alone first; an end that
cannot be written does not take the admission with it.

Decision 0053, as amended on branch perf29: when the admission waits for the end, the row is
inserted once, as it ends: the same row, column for column, as the insert of the running row
and the end's update.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from datetime import datetime, timezone
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from opentelemetry import trace
from sqlalchemy import insert, select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.config import load_settings
from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.invocations import invoker as invoker_module
from dreamer.kernel.invocations.invoker import Invoker
from dreamer.kernel.invocations.principal import Caller, Principal
from dreamer.kernel.invocations.records import Admitted, Run, after, end_job, start_row
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import AuditEntry, Invocation, InvocationLog, User
from dreamer.kernel.store.writer import GroupWriter


class _Worker:
    """Answers every call at once and says when it ran; makes one syscall when asked to."""

    def __init__(self) -> None:
        self.ran = asyncio.Event()
        self.syscall: tuple[str, dict[str, Any]] | None = None
        self.syscall_done = asyncio.Event()
        self.release: asyncio.Event | None = None  # when set: answers only once released

    async def request(self, method: str, params: dict[str, Any], *, syscalls: Any, **_: Any) -> dict[str, Any]:
        self.ran.set()
        if self.release is not None:
            await self.release.wait()
        if self.syscall is not None:
            try:
                await syscalls(*self.syscall)
            except DreamerError:
                pass
            self.syscall_done.set()
        return {"value": "done"}

    def kill(self) -> None:  # pragma: no cover - the disk watch never starts in these tests
        pass


class _Pool:
    def __init__(self, worker: _Worker) -> None:
        self.worker = worker

    @contextlib.asynccontextmanager
    async def lease(self, key: Any, spec: Any, *, timeout: float) -> AsyncIterator[_Worker]:
        yield self.worker


class _Cache(InstallCache):
    """One installed agent, "notes", with one exported function; grants as stored (none)."""

    def agent(self, user_id: int, agent: str) -> Any:
        if agent != "notes":
            return None
        spec = SimpleNamespace(exported=True, confirm=False, background=False, retries=0)
        return SimpleNamespace(
            name="notes", bundle_path=Path("/nonexistent"), manifest=SimpleNamespace(asked_limits=None),
            digest="", function=lambda name: spec,
        )

    def grants(self, user_id: int, agent: str) -> frozenset[str]:
        return frozenset()


def _audit(store: Store) -> list[tuple[str, str, str]]:
    with store.session() as s:
        return [(e.action, e.target, e.decision) for e in s.scalars(select(AuditEntry).order_by(AuditEntry.seq))]


def _world(store: Store, tmp_path: Path, worker: Any = None, cache: Any = None) -> tuple[Invoker, Any, Principal]:
    settings = load_settings(home=tmp_path / "home", database_url=f"sqlite:///{tmp_path / 'settings.db'}")
    with store.engine.begin() as conn:
        user_id = conn.execute(
            insert(User.__table__).values(name="ada", is_admin=False, timezone="UTC").returning(User.__table__.c.id)
        ).scalar_one()
    worker = worker or _Worker()
    invoker = Invoker(settings, store, _Pool(worker), trace.get_tracer("test"), cache or _Cache(store),
                      GroupWriter(store))
    return invoker, worker, Principal(user_id, "ada", "UTC")


def _hold(writer: GroupWriter) -> threading.Event:
    """Keep the writer thread busy until the returned gate is set: every commit waits."""
    gate = threading.Event()
    writer.submit(lambda conn: gate.wait(10))
    return gate


async def _settles_within(task: asyncio.Future[Any], seconds: float) -> bool:
    done, _ = await asyncio.wait({task}, timeout=seconds)
    return bool(done)


def test_an_allowed_calls_answer_waits_for_its_audit_row(store: Store, tmp_path: Path) -> None:
    invoker, worker, ada = _world(store, tmp_path)

    async def main() -> list[tuple[str, str, str]]:
        gate = _hold(invoker.writer)
        call = asyncio.ensure_future(invoker.invoke(ada, "notes", "read", {}, Caller("user")))
        # The call runs while its admission waits in the writer (0051)...
        await asyncio.wait_for(worker.ran.wait(), 5)
        # ...but its answer does not come back before the admission is durable.
        assert not await _settles_within(call, 0.3)
        assert _audit(store) == []
        gate.set()
        outcome = await asyncio.wait_for(call, 10)
        assert outcome.value == "done"
        return _audit(store)  # read at once: durable when the answer came back

    try:
        assert asyncio.run(main()) == [("functions.call", "notes.read", "allow")]
    finally:
        invoker.writer.close()


def test_a_syscall_waits_for_the_admission_of_the_call_that_makes_it(store: Store, tmp_path: Path) -> None:
    invoker, worker, ada = _world(store, tmp_path)
    seen: list[list[tuple[str, str, str]]] = []

    async def handler(ctx: Any, params: dict[str, Any]) -> None:
        seen.append(_audit(store))

    invoker.syscalls["test.look"] = handler
    worker.syscall = ("test.look", {})

    async def main() -> None:
        gate = _hold(invoker.writer)
        call = asyncio.ensure_future(invoker.invoke(ada, "notes", "read", {}, Caller("user")))
        await asyncio.wait_for(worker.ran.wait(), 5)
        assert not await _settles_within(asyncio.ensure_future(worker.syscall_done.wait()), 0.3)
        assert seen == []
        gate.set()
        await asyncio.wait_for(call, 10)

    try:
        asyncio.run(main())
    finally:
        invoker.writer.close()
    assert seen == [[("functions.call", "notes.read", "allow")]]


def test_a_refusal_is_committed_before_it_is_said(store: Store, tmp_path: Path) -> None:
    invoker, worker, ada = _world(store, tmp_path)

    async def main() -> list[tuple[str, str, str]]:
        gate = _hold(invoker.writer)
        # An agent with no grant to call notes: refused, and the refusal is a decision to keep.
        call = asyncio.ensure_future(
            invoker.invoke(ada, "notes", "read", {}, Caller("agent", "nosy", ("nosy",), None))
        )
        assert not await _settles_within(call, 0.3)
        assert _audit(store) == []
        gate.set()
        with pytest.raises(DreamerError) as refused:
            await asyncio.wait_for(call, 10)
        assert refused.value.code == "permission_denied"
        return _audit(store)

    try:
        assert asyncio.run(main()) == [("agents.call", "notes.read", "deny")]
    finally:
        invoker.writer.close()
    assert not worker.ran.is_set()


def _invocations(store: Store) -> list[tuple[str, str]]:
    with store.session() as s:
        return [(i.function, i.status) for i in s.scalars(select(Invocation))]


def test_a_short_calls_admission_and_end_are_one_transaction(store: Store, tmp_path: Path) -> None:
    invoker, worker, ada = _world(store, tmp_path)

    async def main() -> int:
        await invoker.invoke(ada, "notes", "read", {}, Caller("user"))  # the writer's first use
        before = invoker.writer.batches
        outcome = await invoker.invoke(ada, "notes", "read", {}, Caller("user"))
        assert outcome.value == "done"
        return invoker.writer.batches - before

    try:
        assert asyncio.run(main()) == 1
    finally:
        invoker.writer.close()
    assert _audit(store) == [("functions.call", "notes.read", "allow")] * 2
    assert _invocations(store) == [("read", "succeeded")] * 2


def test_a_call_that_outlasts_the_bound_has_its_admission_on_record_while_it_runs(
    store: Store, tmp_path: Path
) -> None:
    invoker, worker, ada = _world(store, tmp_path)
    worker.release = asyncio.Event()

    async def main() -> None:
        call = asyncio.ensure_future(invoker.invoke(ada, "notes", "read", {}, Caller("user")))
        await asyncio.wait_for(worker.ran.wait(), 5)
        for _ in range(500):  # the bound is far shorter than these 5 s
            if _audit(store):
                break
            await asyncio.sleep(0.01)
        assert not call.done()
        assert _audit(store) == [("functions.call", "notes.read", "allow")]
        assert _invocations(store) == [("read", "running")]
        worker.release.set()  # type: ignore[union-attr]
        await asyncio.wait_for(call, 10)

    try:
        asyncio.run(main())
    finally:
        invoker.writer.close()
    assert _invocations(store) == [("read", "succeeded")]


def test_an_end_that_cannot_be_written_leaves_the_admission_on_record(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    invoker, worker, ada = _world(store, tmp_path)

    def unwritable(*args: Any) -> Any:
        def job(conn: Any) -> None:
            raise RuntimeError("the end cannot be written")

        return job

    monkeypatch.setattr(invoker_module, "end_job", unwritable)
    monkeypatch.setattr(invoker_module, "ended", unwritable)  # the admission and the end in one (0053)

    async def main() -> None:
        with pytest.raises(RuntimeError, match="cannot be written"):
            await invoker.invoke(ada, "notes", "read", {}, Caller("user"))

    try:
        asyncio.run(main())
    finally:
        invoker.writer.close()
    assert _audit(store) == [("functions.call", "notes.read", "allow")]
    assert _invocations(store) == [("read", "running")]  # as a crash would leave it: marked at the next start


def test_a_call_cancelled_while_it_runs_keeps_its_admission_and_its_end(store: Store, tmp_path: Path) -> None:
    invoker, worker, ada = _world(store, tmp_path)
    worker.release = asyncio.Event()
    # Longer than the test: the admission is still held when the request is cancelled.
    invoker.admission.deferred_at_most_s = 60.0

    async def main() -> None:
        call = asyncio.ensure_future(invoker.invoke(ada, "notes", "read", {}, Caller("user")))
        await asyncio.wait_for(worker.ran.wait(), 5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    try:
        asyncio.run(main())
    finally:
        invoker.writer.close()  # writes what was queued
    assert _audit(store) == [("functions.call", "notes.read", "allow")]
    assert _invocations(store) == [("read", "failed")]


@pytest.mark.parametrize("status", ["succeeded", "failed"])
def test_a_row_written_once_as_it_ends_is_the_row_inserted_then_finished(
    store: Store, tmp_path: Path, status: str
) -> None:
    _, _, ada = _world(store, tmp_path)
    error = DreamerError("timeout", "too slow") if status == "failed" else None
    value = None if error else {"items": ["milk", "tea"], "n": 2}
    ids = []
    for way in ("insert then update", "written once"):
        run = Run(id=f"inv_{way.replace(' ', '_')}", trace_id="ab" * 16)
        run.sink("log", "info", "a line")
        start = start_row(ada, run, "notes", "read", {"q": 1}, Caller("user"), "node-a")
        start["created_at"] = start["started_at"] = datetime(2026, 12, 7, 14, 0, tzinfo=timezone.utc)
        admitted = Admitted(start, lambda conn: None)
        job = (after(admitted, end_job(run, status, value, error, 1.0)) if way == "insert then update"
               else admitted.ended(run, status, value, error, 1.0))
        with store.engine.begin() as conn:
            job(conn)
        ids.append(run.id)
    with store.session() as s:
        rows = [s.get(Invocation, i) for i in ids]
        logs = [s.execute(select(InvocationLog.message).where(InvocationLog.invocation_id == i)).scalars().all()
                for i in ids]
    columns = [c.key for c in Invocation.__table__.columns if c.key not in ("id", "finished_at")]
    assert {c: getattr(rows[0], c) for c in columns} == {c: getattr(rows[1], c) for c in columns}
    assert rows[0].status == rows[1].status == status
    assert rows[0].finished_at is not None and rows[1].finished_at is not None
    assert logs == [["a line"], ["a line"]]
