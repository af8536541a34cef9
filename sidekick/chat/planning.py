"""Where Sidekick reads messages: worker processes and threads with a time budget, never the event loop.

Reading a message (the memory rules, the offline planner, building a tool list's
index) is CPU work in Python. On the event loop it would hold every other user's
requests for as long as it takes. The offline planner runs in a small pool of
worker processes (`plan`): pure computation over picklable data, and in another
process it cannot hold the kernel's GIL either, so even a large index build leaves
the kernel's own threads free. Work that needs the kernel's database (the memory
rules) runs in a pool of threads (`run`). Either way one message at a time per
user, so a user who floods Sidekick queues behind themselves and leaves the
workers for everyone else. A message that takes longer than BUDGET_S is answered
with TOO_SLOW (its worker finishes in the background: the planner bounds its own
work, so it does end).
"""

from __future__ import annotations

import asyncio
import ctypes
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from dreamer.sidekick.planner import OfflinePlanner, Plan, PlanContext, Tool

T = TypeVar("T")

WORKERS = 4
PROCESSES = 2  # planning processes (each holds its own embedding model, about 40 MB, and indexes)
BUDGET_S = 10.0
WARM_WAIT_S = 120.0  # a planning process's start (interpreter, embedding model), waited for outside BUDGET_S
PR_SET_PDEATHSIG = 1  # prctl(2)
TOO_SLOW = "That message took too long to read. Try saying it in fewer words, or one request at a time."


class TooSlow(Exception):
    """Reading one message took longer than its budget."""


class PlanningPool:
    def __init__(self, workers: int = WORKERS, budget_s: float = BUDGET_S, processes: int = PROCESSES) -> None:
        self.budget_s = budget_s
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sidekick-plan")
        self._processes = processes
        self._locks: dict[int, asyncio.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, user_id: int) -> asyncio.Lock:
        with self._guard:
            lock = self._locks.get(user_id)
            if lock is None:
                if len(self._locks) > 10000:  # forget idle users' locks
                    self._locks = {k: v for k, v in self._locks.items() if v.locked()}
                lock = self._locks[user_id] = asyncio.Lock()
            return lock

    async def run(self, user_id: int, work: Callable[[], T]) -> T:
        """work() in a planning thread, after this user's earlier messages; TooSlow past the budget."""
        return await self._submit(user_id, self._executor, work)

    async def plan(self, user_id: int, planner: Any, text: str, tools: Sequence[Tool], context: PlanContext) -> Plan:
        """planner.plan(text, tools, context) in a planning process when it is the offline planner
        (any other planner, say a test's, in a thread); TooSlow past the budget."""
        if type(planner) is not OfflinePlanner or self._processes < 1:
            return await self.run(user_id, lambda: planner.plan(text, tools, context))
        pool = self._pool()
        try:
            # A planning process still starting (the first message of a kernel that did not warm one) is
            # waited for outside the message's budget: its start is no part of reading the message. (Shielded: a
            # cancelled wait would cancel the shared warm-up while it is still queued, for every later message.)
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(_warming(pool))), WARM_WAIT_S)
            return await self._submit(user_id, pool, _plan_in_worker, text, list(tools), context)
        except TimeoutError:  # the planning process did not start
            raise TooSlow(TOO_SLOW) from None
        except BrokenProcessPool:  # a worker died (killed, out of memory): a fresh pool for the next message
            _forget(pool)
            raise

    def plan_blocking(self, planner: Any, text: str, tools: Sequence[Tool], context: PlanContext) -> Plan:
        """plan() for code already in a planning thread: waits for the planning process there."""
        if type(planner) is not OfflinePlanner or self._processes < 1:
            return planner.plan(text, tools, context)
        pool = self._pool()
        try:
            _warming(pool).result(timeout=WARM_WAIT_S)
            return pool.submit(_plan_in_worker, text, list(tools), context).result(timeout=self.budget_s)
        except FutureTimeout:
            raise TooSlow(TOO_SLOW) from None
        except BrokenProcessPool:
            _forget(pool)
            raise

    def warm(self) -> None:
        """Start a planning process now (it loads the embedding model), not on the first message."""
        if self._processes < 1:
            return
        # One process now (a kernel's start is busy enough); the pool starts the others as messages need them.
        _warming(self._pool())

    def _pool(self) -> ProcessPoolExecutor:
        return _shared_pool(self._processes)

    async def _submit(self, user_id: int, executor: Executor, work: Callable[..., T], *args: Any) -> T:
        lock = self._lock(user_id)
        await lock.acquire()
        try:
            future = asyncio.get_running_loop().run_in_executor(executor, work, *args)
        except BaseException:
            lock.release()
            raise
        # The user's next message waits until this one's worker is done, even past the budget.
        future.add_done_callback(lambda _: lock.release())
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.budget_s)
        except TimeoutError:
            raise TooSlow(TOO_SLOW) from None

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        close_processes()


# One pool of planning processes per kernel process, shared by every Sidekick in it (tests make many).
_POOL: ProcessPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _shared_pool(processes: int) -> ProcessPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            # spawn, not fork: the kernel has threads, and a forked child would inherit their locks.
            _POOL = ProcessPoolExecutor(max_workers=processes, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_warm_worker, initargs=(os.getpid(),))
        return _POOL


_WARMING: tuple[ProcessPoolExecutor, Future[bool]] | None = None  # a pool and its first process's warm-up


def _warming(pool: ProcessPoolExecutor) -> Future[bool]:
    """The warm-up of `pool`'s first process, started with the first call (PlanningPool.warm, or the
    first message): done once that process has loaded the embedding model and the lemma table."""
    global _WARMING
    with _POOL_LOCK:
        if _WARMING is None or _WARMING[0] is not pool:  # none yet, or an earlier pool's (it broke, or was closed)
            _WARMING = (pool, pool.submit(_ready))
        return _WARMING[1]


def close_processes() -> None:
    """Stop the planning processes (the kernel is shutting down): they would otherwise outlive it."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def _forget(pool: ProcessPoolExecutor) -> None:
    global _POOL
    with _POOL_LOCK:
        if _POOL is pool:
            _POOL = None


_WORKER_PLANNER: OfflinePlanner | None = None


def _warm_worker(kernel_pid: int) -> None:
    """A planning process loads the embedding model once, before its first message, and ends
    when the kernel does, however the kernel ended (killed, crashed: no shutdown ran)."""
    global _WORKER_PLANNER
    _end_with_parent(kernel_pid)
    # Below the kernel in the scheduler: on a machine with fewer cores than busy processes, a
    # costly message then waits for the CPU instead of taking it from the kernel's event loop.
    try:
        os.nice(10)
    except OSError:
        pass
    from dreamer.sidekick.planner.language import chunks, embeddings

    embeddings.available()
    chunks.load()  # the lemma table too (a quarter of a second), not on the first message that needs it
    _WORKER_PLANNER = OfflinePlanner()


def _end_with_parent(kernel_pid: int) -> None:
    # Linux: the kernel's death sends this process SIGTERM. The kernel may have died while this
    # process was still starting (before the request), and elsewhere there is no such request:
    # a thread notices this process was handed to another parent.
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass

    def watch() -> None:
        while os.getppid() == kernel_pid:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="planner-parent-watch", daemon=True).start()


def _ready() -> bool:
    return _WORKER_PLANNER is not None


def _plan_in_worker(text: str, tools: list[Tool], context: PlanContext) -> Plan:
    return (_WORKER_PLANNER or OfflinePlanner()).plan(text, tools, context)
