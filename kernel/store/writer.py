"""Group commit: one thread writes the call path's records, many calls per transaction.

Every function call writes an audit entry and its invocation row, then its result
and logs. Written on the event loop, each of those transactions blocks every other
request for its duration, and with SQLite a second writer (the span exporter, a
syscall's audit entry) makes the loser sleep in SQLite's busy handler, a millisecond
at a time. Here one thread owns those writes: a job queued while a transaction is
being written joins the next one, so under load many calls share one commit, and the
event loop only waits on a future.

A job is a function of a Connection that returns a value. Jobs of one batch run in
one transaction; if any raises, the batch is rolled back and each job is run again
alone, so one bad job fails only its own caller and nothing is half-written.

With SQLite, a caller that finds the writer idle (nothing queued, nothing being written)
and no other call in flight commits its job itself instead (decision 0052): a small SQLite
commit costs about a tenth of the thread hop. Under load the thread keeps the writes, where
many share one commit and the event loop's core is left to the calls. It waits for no other writer (busy_timeout 0 for that transaction): if
SQLite's write lock is held elsewhere the job goes to the thread as before, so the event
loop never sleeps in SQLite's busy handler. Nor does it checkpoint the WAL: the thread does,
every CHECKPOINT_EVERY of the callers' commits. PostgreSQL always uses the thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from sqlalchemy import Connection
from sqlalchemy.exc import OperationalError

from dreamer.contracts.database import SQLITE_BUSY_TIMEOUT_MS
from dreamer.kernel.store.db import Store

log = logging.getLogger("dreamer.store")

T = TypeVar("T")
Job = Callable[[Connection], Any]

# Enough to amortise a commit across a burst, small enough that one transaction
# never holds SQLite's write lock for long.
MAX_BATCH = 128
# The callers' commits between two checkpoints by the thread: a call's records write about 17
# pages of WAL (measured: about 850 pages between checkpoints), so the WAL stays near SQLite's
# own threshold of 1,000 pages, as it did when the commit that passed it checkpointed.
CHECKPOINT_EVERY = 50
SQLITE_AUTOCHECKPOINT_PAGES = 1000  # SQLite's default, restored on a connection given back


@dataclass
class _Item:
    job: Job
    # Who waits: a thread (a concurrent future) or a coroutine (an asyncio future, settled
    # on its own loop: one wake-up of that loop per committed batch, not one per job).
    future: concurrent.futures.Future[Any] | None = None
    waiter: asyncio.Future[Any] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    # Written even if its waiter is cancelled: what it records may already have happened
    # (an admission queued while its call runs, decision 0051).
    always: bool = False

    def start(self) -> bool:
        """False if the caller gave up before the job started: it is not run."""
        if self.future is not None:
            return self.future.set_running_or_notify_cancel()
        assert self.waiter is not None
        return self.always or not self.waiter.cancelled()


# A job's item, its result, and its failure (None when it committed).
_Outcome = tuple[_Item, Any, BaseException | None]


def _settle(outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
    """On the waiters' loop: hand each its result or its error (unless it was cancelled meanwhile)."""
    for waiter, result, error in outcomes:
        if waiter.done():
            continue
        if error is not None:
            waiter.set_exception(error)
        else:
            waiter.set_result(result)


class GroupWriter:
    def __init__(self, store: Store, *, max_batch: int = MAX_BATCH) -> None:
        self.store = store
        self.max_batch = max_batch
        # An in-memory SQLite store is one connection shared by every thread; a second
        # thread's transaction would interleave with the caller's, so write inline.
        self.inline = store.is_memory
        # A file SQLite store: an idle writer lets the caller commit (decision 0052).
        self.idle_inline = store.is_sqlite and not store.is_memory
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        # Jobs queued and not yet written, and a caller committing its own (under _lock):
        # a caller commits itself only at zero, so nothing queued before it commits after it.
        self._pending = 0
        # Held while a transaction is written: the thread waits for a caller's own commit.
        self._txn = threading.Lock()
        self._own: Connection | None = None  # see _own_connection
        self._own_commits = 0
        self.in_flight = 0  # calls being served that write here (see `serving`), on the event loop
        self._closed = False
        self.batches = 0  # transactions written, for tests and benchmarks
        self.jobs = 0

    def submit(self, job: Callable[[Connection], T]) -> concurrent.futures.Future[T]:
        """Queue a job; the future resolves once its transaction has committed."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._enqueue(_Item(job, future))
        return future

    async def write(self, job: Callable[[Connection], T]) -> T:
        """Queue a job and wait for its commit without blocking the event loop."""
        done, result = self._commit_if_idle(job)
        if done:
            return cast(T, result)
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[T] = loop.create_future()
        self._enqueue(_Item(job, waiter=waiter, loop=loop))
        return await waiter

    def queue(self, job: Callable[[Connection], T]) -> asyncio.Future[T]:
        """Queue a job without waiting (decision 0051): the future resolves once it has
        committed. The job is written even if the future is cancelled; await it through
        `asyncio.shield` before saying anything that depends on it."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[T] = loop.create_future()
        # Read by whoever awaits it; this keeps an unawaited failure out of asyncio's "never retrieved" log.
        waiter.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            done, result = self._commit_if_idle(job)
        except Exception as exc:  # noqa: BLE001 - the awaiting caller gets it, as from the thread
            waiter.set_exception(exc)
            return waiter
        if done:
            waiter.set_result(cast(T, result))
        else:
            self._enqueue(_Item(job, waiter=waiter, loop=loop, always=True))
        return waiter

    def write_now(self, job: Callable[[Connection], T]) -> T:
        """From synchronous code: queue a job and wait for its commit."""
        done, result = self._commit_if_idle(job)
        if done:
            return cast(T, result)
        return self.submit(job).result()

    def _enqueue(self, item: _Item) -> None:
        with self._lock:
            if self._closed or self.inline:
                # Inline, or after close (a kernel stopping): write in the caller's thread.
                _deliver(self._run_alone(item))
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="dreamer-store-writer", daemon=True)
                self._thread.start()
            self._pending += 1
            self._queue.put(item)

    # -- a caller's own commit (decision 0052) ------------------------------------------

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """Around one call: while another is in flight, commits stay on the thread, where
        they share transactions instead of each paying its own on the event loop."""
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1

    def _commit_if_idle(self, job: Callable[[Connection], T]) -> tuple[bool, T | None]:
        """(True, result) if the writer was idle and the job committed here; (False, None)
        if it must be queued. A job that raises raises here, as its future would."""
        if not self.idle_inline or self.in_flight > 1:
            return False, None
        with self._lock:
            if self._closed or self._pending:
                return False, None
            self._pending += 1
        try:
            with self._txn:
                return self._commit_unless_locked(job)
        finally:
            with self._lock:
                self._pending -= 1

    def _commit_unless_locked(self, job: Callable[[Connection], T]) -> tuple[bool, T | None]:
        conn = self._own_connection()
        try:
            with conn.begin():
                result = job(conn)
        except OperationalError as exc:
            if "locked" in str(exc.orig) or "busy" in str(exc.orig):
                return False, None
            self._drop_own_connection()  # a broken connection is not kept for the next job
            raise
        self.batches += 1
        self.jobs += 1
        self._own_commits += 1
        if self._own_commits % CHECKPOINT_EVERY == 0:
            # The callers' connection never checkpoints itself (see _own_connection); the
            # thread does, without anyone waiting for it.
            self.submit(_checkpoint)
        return True, result

    def _own_connection(self) -> Connection:
        """The callers' own connection (one at a time, under _txn), kept checked out: no pool
        checkout and reset per commit. Its busy_timeout is 0, so a write lock held by another
        connection or process fails the attempt at once instead of putting the event loop to
        sleep in SQLite's busy handler; the job then goes to the thread, which waits."""
        if self._own is None:
            conn = self.store.engine.connect()
            conn.exec_driver_sql("PRAGMA busy_timeout = 0")
            # The commit that passes SQLite's 1,000 pages of WAL would copy them into the
            # database and fsync both, milliseconds on the event loop while every request
            # waits; here the writer thread checkpoints every CHECKPOINT_EVERY commits instead.
            conn.exec_driver_sql("PRAGMA wal_autocheckpoint = 0")
            conn.commit()
            self._own = conn
        return self._own

    def _drop_own_connection(self) -> None:
        if self._own is not None:
            own, self._own = self._own, None
            with contextlib.suppress(Exception):
                # Back to the pool with the busy timeout and checkpoints every other user of it expects.
                own.exec_driver_sql(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
                own.exec_driver_sql(f"PRAGMA wal_autocheckpoint = {SQLITE_AUTOCHECKPOINT_PAGES}")
                own.commit()
            own.close()

    def close(self, timeout: float = 10.0) -> None:
        """Write everything queued, then stop the thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
            if thread is not None:
                self._queue.put(None)
        if thread is not None:
            thread.join(timeout)
        with self._txn:
            self._drop_own_connection()

    # -- the writer thread ----------------------------------------------------------

    def _loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stop = False
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            with self._txn:
                outcomes = self._run(batch)
            with self._lock:
                # Before the waiters wake: the next job one of them writes may find the writer idle.
                self._pending -= len(batch)
            _deliver(outcomes)
            if stop:
                return

    def _run(self, batch: list[_Item]) -> list[_Outcome]:
        live = [item for item in batch if item.start()]
        if not live:
            return []
        results: list[Any] = []
        try:
            with self.store.engine.begin() as conn:
                for item in live:
                    results.append(item.job(conn))
        except BaseException:  # noqa: BLE001 - find the job that failed, keep the others
            return [outcome for item in live for outcome in self._run_alone(item, started=True)]
        self.batches += 1
        self.jobs += len(live)
        return [(item, result, None) for item, result in zip(live, results)]

    def _run_alone(self, item: _Item, *, started: bool = False) -> list[_Outcome]:
        if not started and not item.start():
            return []
        try:
            with self.store.engine.begin() as conn:
                result = item.job(conn)
        except BaseException as exc:  # noqa: BLE001 - the caller gets its own failure
            return [(item, None, exc)]
        self.batches += 1
        self.jobs += 1
        return [(item, result, None)]


def _checkpoint(conn: Connection) -> None:
    """Copy the WAL into the database as far as no reader needs it (SQLite's automatic kind:
    it waits for no one and blocks no writer)."""
    conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")


def _deliver(outcomes: list[_Outcome]) -> None:
    """Results to their waiters: threads at once, each event loop once for all of its own."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Any, BaseException | None]]] = {}
    for item, result, error in outcomes:
        if item.future is not None:
            if error is not None:
                item.future.set_exception(error)
            else:
                item.future.set_result(result)
        else:
            assert item.waiter is not None and item.loop is not None
            by_loop.setdefault(item.loop, []).append((item.waiter, result, error))
    for loop, settled in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle, settled)
        except RuntimeError:
            pass  # the loop has closed: nobody is waiting any more
