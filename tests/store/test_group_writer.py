"""The group writer: many jobs per transaction, and one bad job fails only itself."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from sqlalchemy import Connection, func, insert, select

from dreamer.kernel.audit.log import append, verify
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import AuditEntry, User
from dreamer.kernel.store import writer as writer_module
from dreamer.kernel.store.writer import GroupWriter


def _add_user(name: str):
    return lambda conn: conn.execute(insert(User.__table__).values(name=name, is_admin=False, timezone="UTC"))


def _names(store: Store) -> list[str]:
    with store.session() as s:
        return sorted(s.scalars(select(User.name)))


def test_a_failing_job_fails_alone_and_the_rest_of_its_batch_commits(store: Store) -> None:
    writer = GroupWriter(store)
    gate = threading.Event()
    try:
        # Hold the writer thread so the next jobs queue up and share one batch.
        held = writer.submit(lambda conn: gate.wait(5))
        good1 = writer.submit(_add_user("ada"))
        bad = writer.submit(_add_user("ada"))  # the same name again: a unique violation
        good2 = writer.submit(_add_user("bob"))
        gate.set()
        held.result(5)
        good1.result(5)
        good2.result(5)
        with pytest.raises(Exception, match="(?i)unique|duplicate"):
            bad.result(5)
    finally:
        writer.close()
    assert _names(store) == ["ada", "bob"]


def test_queued_jobs_share_transactions_and_results_come_back(store: Store) -> None:
    writer = GroupWriter(store)
    gate = threading.Event()

    def audited(n: int) -> Any:
        return lambda conn: append(conn, user_id=None, actor="test", action="t", target=str(n), decision="allow").seq

    try:
        held = writer.submit(lambda conn: gate.wait(5))
        futures = [writer.submit(audited(n)) for n in range(50)]
        gate.set()
        held.result(5)
        seqs = [f.result(5) for f in futures]
    finally:
        writer.close()
    # In submission order, each with its own place in the chain, and far fewer commits than jobs.
    assert seqs == sorted(seqs) and len(set(seqs)) == 50
    assert writer.jobs == 51 and writer.batches < 10
    with store.session() as s:
        assert verify(s).ok
        assert s.scalar(select(func.count()).select_from(AuditEntry)) == 50


def test_an_event_loop_awaits_commits_without_blocking(store: Store) -> None:
    writer = GroupWriter(store)

    async def main() -> list[Any]:
        return await asyncio.gather(*(writer.write(_add_user(f"u{n}")) for n in range(20)))

    try:
        asyncio.run(main())
    finally:
        writer.close()
    assert len(_names(store)) == 20


def test_close_writes_what_was_queued_and_later_jobs_run_inline(store: Store) -> None:
    writer = GroupWriter(store)
    futures = [writer.submit(_add_user(f"q{n}")) for n in range(10)]
    writer.close()
    assert all(f.done() and f.exception() is None for f in futures)
    writer.write_now(_add_user("after"))
    assert "after" in _names(store) and len(_names(store)) == 11


def test_an_in_memory_store_is_written_inline() -> None:
    store = Store("sqlite://")
    store.migrate()
    writer = GroupWriter(store)
    seen: list[str] = []

    def job(conn: Connection) -> None:
        seen.append(threading.current_thread().name)

    writer.write_now(job)
    assert seen == [threading.current_thread().name]


# -- decision 0052: an idle writer lets a SQLite caller commit on its own thread -------


def _thread_of(seen: list[str]) -> Any:
    return lambda conn: seen.append(threading.current_thread().name)


def test_an_idle_sqlite_writer_commits_in_the_callers_thread_and_postgresql_never(store: Store) -> None:
    writer = GroupWriter(store)
    seen: list[str] = []

    async def main() -> None:
        await writer.write(_thread_of(seen))
        await writer.queue(_thread_of(seen))
        writer.write_now(_thread_of(seen))

    try:
        asyncio.run(main())
    finally:
        writer.close()
    here = threading.current_thread().name
    assert seen == ([here] * 3 if store.is_sqlite else ["dreamer-store-writer"] * 3)


def test_a_job_queued_behind_a_busy_writer_is_not_overtaken(store: Store) -> None:
    """While the thread holds a job, a later one queues behind it, even from an event loop:
    the finish of a call must never commit before its admission."""
    writer = GroupWriter(store)
    gate = threading.Event()
    order: list[str] = []

    async def main() -> None:
        held = writer.submit(lambda conn: (gate.wait(5), order.append("first")))
        later = asyncio.ensure_future(writer.write(lambda conn: order.append("second")))
        await asyncio.sleep(0.1)
        assert order == [] and not later.done()
        gate.set()
        await later
        held.result(5)

    try:
        asyncio.run(main())
    finally:
        writer.close()
    assert order == ["first", "second"]


def test_an_idle_write_does_not_wait_on_another_connections_lock(store: Store) -> None:
    """SQLite's write lock held elsewhere (another process, an install): the caller does not
    sleep in the busy handler; its job goes to the thread, which waits, and commits once free."""
    if not store.is_sqlite:
        pytest.skip("PostgreSQL always writes through the thread")
    sqlite_store = store
    writer = GroupWriter(sqlite_store)
    seen: list[str] = []
    other = sqlite_store.engine.connect()
    other.exec_driver_sql("BEGIN IMMEDIATE")  # holds the write lock

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(0.3, other.rollback)
        started = time.monotonic()
        pending = asyncio.ensure_future(writer.write(lambda conn: (_add_user("lockwait")(conn), _thread_of(seen)(conn))))
        await asyncio.sleep(0)  # the write's synchronous part: its attempt to commit here
        # The event loop was not blocked: the job was handed to the thread at once.
        assert time.monotonic() - started < 0.2
        await pending

    try:
        asyncio.run(main())
    finally:
        other.close()
        writer.close()
    assert seen == ["dreamer-store-writer"] and "lockwait" in _names(sqlite_store)


def test_the_callers_commits_leave_wal_checkpoints_to_the_thread(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint copies the WAL into the database and fsyncs both: milliseconds that must
    not land on the event loop when its own commit passes SQLite's threshold. The callers'
    connection never checkpoints; every CHECKPOINT_EVERY of its commits the thread does."""
    if not store.is_sqlite:
        pytest.skip("PostgreSQL has no WAL checkpoints of this kind, and commits on the thread")
    writer = GroupWriter(store)
    checkpoints: list[str] = []
    checkpoint = writer_module._checkpoint

    def recorded(conn: Connection) -> None:
        checkpoints.append(threading.current_thread().name)
        checkpoint(conn)

    monkeypatch.setattr(writer_module, "_checkpoint", recorded)

    async def main() -> int:
        for i in range(writer_module.CHECKPOINT_EVERY * 3):
            await writer.write(_add_user(f"u{i}"))
        return int(writer._own_connection().exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one())

    try:
        assert asyncio.run(main()) == 0
    finally:
        writer.close()
    # A write that finds a checkpoint still queued goes to the thread and is not counted: two or three.
    assert len(checkpoints) >= 2 and set(checkpoints) == {"dreamer-store-writer"}
    assert len(_names(store)) == writer_module.CHECKPOINT_EVERY * 3
