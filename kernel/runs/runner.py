"""The background runner: takes due invocations off the queue and runs them, within limits.

One asyncio task watches the queue. It wakes when an invocation is queued (the
Invoker calls `wake`), when a run ends, when a retry delay is over, and at least
every `poll_s` seconds. Each claimed invocation runs as its own task through
`Invoker.run_queued`, so it uses the same worker pool, sandbox, grants and
deadlines as a direct call. At most `per_user` invocations of one user and
`per_agent` of one (user, agent) run at once, `total` overall; the rest wait in the
queue, and `queue.due` picks who goes next by fair share (least-loaded user first, each
user's agents round-robin), so one user's backlog never holds another's work back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.invoker import Invoker
from dreamer.kernel.invocations.records import QueuedRun
from dreamer.kernel.runs import queue
from dreamer.kernel.store.db import Store

log = logging.getLogger("dreamer.runs")


class BackgroundRunner:
    def __init__(
        self, store: Store, invoker: Invoker, *, per_user: int = 4, per_agent: int = 2, total: int = 32, poll_s: float = 2.0
    ) -> None:
        self.store = store
        self.invoker = invoker
        self.per_user = per_user
        self.per_agent = per_agent
        self.total = total  # background invocations of the whole installation running at once
        self.poll_s = poll_s
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._by_user: Counter[int] = Counter()
        self._by_agent: Counter[tuple[int, str]] = Counter()
        self._cancelled: set[str] = set()
        self._stopping = False
        self.node: str | None = None  # set on a cluster node: claims carry it, recovery is its own only
        self.paused = False  # a cluster node that lost its lease takes no work (kernel/cluster/runtime.py)
        self.on_cancel: Callable[[str], None] | None = None  # set on a cluster node: the running node stops it
        # Set on a cluster node (kernel/cluster/placement.py): the users another node holds,
        # whose runs are that node's, and a check that takes a user's lease before a claim.
        self.users_elsewhere: Callable[[], list[int]] | None = None
        self.may_run: Callable[[int], Awaitable[bool]] | None = None

    def start(self) -> dict[str, int]:
        """Recover what a dead kernel left running, then start taking work."""
        counts = queue.recover(self.store, node=self.node)
        if any(counts.values()):
            log.warning("background invocations interrupted by the last shutdown: %(requeued)d queued again, %(failed)d failed", counts)
        self._loop_task = asyncio.get_running_loop().create_task(self._run_forever())
        return counts

    def wake(self) -> None:
        self._wake.set()

    def running(self) -> int:
        return len(self._tasks)

    async def cancel(self, user_id: int, run_id: str) -> dict[str, object]:
        """Cancel a queued or running background invocation of this user's."""
        answer = queue.cancel(self.store, user_id, run_id)
        if answer is None:
            raise DreamerError("not_found", f"no invocation {run_id!r}")
        if not answer["background"]:
            raise DreamerError(
                "conflict", "only background invocations can be cancelled; a direct call ends when its caller goes away"
            )
        if answer["was"] in queue.TERMINAL or answer["status"] != "cancelled":
            raise DreamerError("conflict", f"invocation {run_id} already {answer['status']}; there is nothing to cancel")
        task = self._tasks.get(run_id)
        if task is not None:
            # Cancelling the task kills its worker (WorkerConnection.request), so agent code stops now.
            self._cancelled.add(run_id)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(task), 10)
        elif answer["was"] == "running" and self.on_cancel is not None:
            self.on_cancel(run_id)  # it runs on another node
        return {"id": run_id, "status": "cancelled", "was": answer["was"]}

    def cancel_here(self, run_id: str) -> None:
        """Another node cancelled a run this node is running: stop its worker."""
        task = self._tasks.get(run_id)
        if task is not None:
            self._cancelled.add(run_id)
            task.cancel()

    async def fence(self) -> None:
        """Stop every attempt without writing anything: this node's lease is running out, and
        the node that takes its work over re-queues them (a row changes only for its attempt)."""
        self.paused = True
        tasks = list(self._tasks.items())
        for run_id, task in tasks:
            self._cancelled.add(run_id)
            task.cancel()
        if tasks:
            await asyncio.gather(*(t for _, t in tasks), return_exceptions=True)

    def running_for(self, user_id: int) -> int:
        """Background attempts of this user running here now."""
        return self._by_user[user_id]

    async def stop(self) -> None:
        """Stop taking work; attempts still running are put back by their retry policy."""
        self._stopping = True
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.wait([self._loop_task], timeout=5)
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- internals -------------------------------------------------------------------

    async def _run_forever(self) -> None:
        while True:
            self._wake.clear()
            try:
                await self._fill()
            except Exception:
                log.exception("the background runner could not read the queue")
            await self._sleep()

    async def _sleep(self) -> None:
        timeout = self.poll_s
        due = queue.next_due_at(self.store)
        if due is not None:
            timeout = max(0.05, min(timeout, (due - datetime.now(timezone.utc)).total_seconds()))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._wake.wait()

    async def _fill(self) -> None:
        if self.paused:
            return
        room = self.total - len(self._tasks)
        if room <= 0:
            return
        # Off the event loop: with a long backlog the read takes milliseconds, and HTTP
        # requests must not wait for it. Counts are re-checked below before each claim.
        if self.node is None:
            users, agents = Counter(self._by_user), Counter(self._by_agent)
        else:
            # A cluster node counts every node's running attempts: the per-user and per-agent
            # limits hold for the installation, not per node (`total` is this node's capacity).
            users, agents = await asyncio.to_thread(queue.running_counts, self.store)
        elsewhere = await asyncio.to_thread(self.users_elsewhere) if self.users_elsewhere is not None else []
        order = await asyncio.to_thread(
            queue.due, self.store, per_user=self.per_user, per_agent=self.per_agent,
            running_users=dict(users), running_agents=dict(agents), limit=room, skip_users=elsewhere,
        )
        for run_id, user_id, agent in order:
            if run_id in self._tasks or len(self._tasks) >= self.total:
                continue
            if users[user_id] >= self.per_user or agents[(user_id, agent)] >= self.per_agent:
                continue
            if self.may_run is not None and not await self.may_run(user_id):
                continue
            claimed = queue.claim(self.store, run_id, self.node)
            if claimed is None:
                continue
            users[user_id] += 1
            agents[(user_id, agent)] += 1
            self._by_user[user_id] += 1
            self._by_agent[(user_id, agent)] += 1
            self._tasks[run_id] = asyncio.get_running_loop().create_task(self._attempt(claimed))

    async def _attempt(self, run: QueuedRun) -> None:
        try:
            status = await self.invoker.run_queued(run)
            log.debug("background invocation %s attempt %d: %s", run.id, run.attempt, status)
        except asyncio.CancelledError:
            if run.id not in self._cancelled and self._stopping:
                queue.interrupted(self.store, run)
        except Exception:
            log.exception("background invocation %s failed in the kernel", run.id)
            queue.interrupted(self.store, run)
        finally:
            self._cancelled.discard(run.id)
            self._tasks.pop(run.id, None)
            self._by_user[run.user_id] -= 1
            self._by_agent[(run.user_id, run.agent)] -= 1
            self.wake()
