"""Where Sidekick reads messages: worker threads with a time budget, never the event loop.

Reading a message (the memory rules, the offline planner, building a tool list's
index) is CPU work in Python. On the event loop it would hold every other user's
requests for as long as it takes; here it runs in a small pool of threads of its
own, one message at a time per user, so a user who floods Sidekick queues behind
themselves and leaves the other workers for everyone else. A message that takes
longer than BUDGET_S is answered with TOO_SLOW (its thread finishes in the
background: the planner bounds its own work, so it does end).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

WORKERS = 4
BUDGET_S = 10.0
TOO_SLOW = "That message took too long to read. Try saying it in fewer words, or one request at a time."


class TooSlow(Exception):
    """Reading one message took longer than its budget."""


class PlanningPool:
    def __init__(self, workers: int = WORKERS, budget_s: float = BUDGET_S) -> None:
        self.budget_s = budget_s
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sidekick-plan")
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
        lock = self._lock(user_id)
        await lock.acquire()
        try:
            future = asyncio.get_running_loop().run_in_executor(self._executor, work)
        except BaseException:
            lock.release()
            raise
        # The user's next message waits until this one's thread is done, even past the budget.
        future.add_done_callback(lambda _: lock.release())
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.budget_s)
        except TimeoutError:
            raise TooSlow(TOO_SLOW) from None
