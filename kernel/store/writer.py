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
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Connection

from dreamer.kernel.store.db import Store

log = logging.getLogger("dreamer.store")

T = TypeVar("T")
Job = Callable[[Connection], Any]

# Enough to amortise a commit across a burst, small enough that one transaction
# never holds SQLite's write lock for long.
MAX_BATCH = 128


@dataclass
class _Item:
    job: Job
    # Who waits: a thread (a concurrent future) or a coroutine (an asyncio future, settled
    # on its own loop: one wake-up of that loop per committed batch, not one per job).
    future: concurrent.futures.Future[Any] | None = None
    waiter: asyncio.Future[Any] | None = None
    loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> bool:
        """False if the caller gave up before the job started: it is not run."""
        if self.future is not None:
            return self.future.set_running_or_notify_cancel()
        assert self.waiter is not None
        return not self.waiter.cancelled()


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
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
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
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[T] = loop.create_future()
        self._enqueue(_Item(job, waiter=waiter, loop=loop))
        return await waiter

    def write_now(self, job: Callable[[Connection], T]) -> T:
        """From synchronous code: queue a job and wait for its commit."""
        return self.submit(job).result()

    def _enqueue(self, item: _Item) -> None:
        with self._lock:
            if self._closed or self.inline:
                # Inline, or after close (a kernel stopping): write in the caller's thread.
                self._run_alone(item)
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="dreamer-store-writer", daemon=True)
                self._thread.start()
            self._queue.put(item)

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
            self._run(batch)
            if stop:
                return

    def _run(self, batch: list[_Item]) -> None:
        live = [item for item in batch if item.start()]
        if not live:
            return
        results: list[Any] = []
        try:
            with self.store.engine.begin() as conn:
                for item in live:
                    results.append(item.job(conn))
        except BaseException:  # noqa: BLE001 - find the job that failed, keep the others
            if len(live) == 1:
                self._run_alone(live[0], started=True)
                return
            for item in live:
                self._run_alone(item, started=True)
            return
        self.batches += 1
        self.jobs += len(live)
        _deliver([(item, result, None) for item, result in zip(live, results)])

    def _run_alone(self, item: _Item, *, started: bool = False) -> None:
        if not started and not item.start():
            return
        try:
            with self.store.engine.begin() as conn:
                result = item.job(conn)
        except BaseException as exc:  # noqa: BLE001 - the caller gets its own failure
            _deliver([(item, None, exc)])
            return
        self.batches += 1
        self.jobs += 1
        _deliver([(item, result, None)])


def _deliver(outcomes: list[tuple[_Item, Any, BaseException | None]]) -> None:
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
