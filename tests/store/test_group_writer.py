"""The group writer: many jobs per transaction, and one bad job fails only itself."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from sqlalchemy import Connection, func, insert, select

from dreamer.kernel.audit.log import append, verify
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import AuditEntry, User
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
