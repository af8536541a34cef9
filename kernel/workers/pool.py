"""Warm workers per (user, agent, bundle path).

Starting a sandboxed interpreter costs tens of milliseconds, so a worker stays
alive after a call and is reused. A key may have several workers: a second call
arriving while the first runs gets its own, which is also what keeps two
independent call chains (A→B and B→A from different requests) from waiting on
each other forever.

Per-user quotas (issue 14, finding 5): one user's sandboxes alive at once (warm and
busy workers, and the scratch sandboxes of builds and tests) and the sum of their
memory ceilings are capped, and so is the installation's total. A new sandbox first
makes room by stopping the longest-idle warm worker (the user's own for a user quota,
anyone's for the total); when every counted sandbox is busy it is refused at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from dreamer.kernel.config import Quotas
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox.base import Sandbox, SandboxSpec
from dreamer.kernel.workers.connection import WorkerConnection

log = logging.getLogger("dreamer.workers")


@dataclass(frozen=True)
class WorkerKey:
    user: str
    agent: str
    bundle: str  # the bundle version's path: an upgrade gets fresh workers
    # A digest of the agent's granted folders (fs: / fs.ro:): a worker is never reused
    # once they change, since its mounts were fixed when it started.
    mounts: str = ""


@dataclass
class _Slot:
    idle: list[WorkerConnection] = field(default_factory=list)
    busy: int = 0
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    memory_mb: int = 0  # each worker's memory ceiling (one bundle and limits per key)
    working: dict[int, WorkerConnection] = field(default_factory=dict)  # the busy ones, for stop_user

    def alive(self) -> int:
        return self.busy + sum(1 for w in self.idle if w.alive)


@dataclass(frozen=True)
class SandboxUse:
    workers: int
    memory_mb: int


class WorkerPool:
    def __init__(
        self,
        sandbox: Sandbox,
        *,
        max_per_key: int = 4,
        warm_seconds: float = 300.0,
        max_log_bytes: int = 1024 * 1024,
        quotas: Quotas | None = None,
        max_total: int | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.max_per_key = max_per_key
        self.warm_seconds = warm_seconds
        self.max_log_bytes = max_log_bytes
        self.quotas = quotas  # None: no per-user quota (tests of the pool alone)
        self.max_total = max_total
        self._slots: dict[WorkerKey, _Slot] = {}
        # Slots evicted while some of their workers were still busy: still counted until they end.
        self._draining_slots: dict[int, tuple[str, _Slot]] = {}
        self._scratch: dict[str, list[int]] = {}  # user -> memory ceilings of their builds and tests
        self._reaper: asyncio.Task[None] | None = None
        self._preparing: asyncio.Task[None] | None = None
        self.started = 0  # workers started since boot, for tests and benchmarks

    def start_reaper(self) -> None:
        if self._reaper is None:
            loop = asyncio.get_running_loop()
            self._reaper = loop.create_task(self._reap_forever())
            # What the backend keeps ahead of the first worker (the fork server's zygote), in the background.
            self._preparing = loop.create_task(self._prepare())

    async def _prepare(self) -> None:
        try:
            await self.sandbox.prepare()
        except Exception as error:  # noqa: BLE001 - the first worker's start tries again and says why
            log.warning("the %s sandbox could not get ready ahead of the first worker: %s", self.sandbox.name, error)

    @contextlib.asynccontextmanager
    async def lease(
        self, key: WorkerKey, spec: Callable[[], SandboxSpec], *, timeout: float
    ) -> AsyncIterator[WorkerConnection]:
        """Yield a worker for exclusive use; it goes back warm if it is still healthy."""
        slot = self._slots.setdefault(key, _Slot())
        worker = await self._acquire(key, slot, spec, timeout)
        slot.working[id(worker)] = worker
        try:
            yield worker
        finally:
            slot.working.pop(id(worker), None)
            async with slot.changed:
                slot.busy -= 1
                if worker.alive and self._slots.get(key) is slot:
                    slot.idle.append(worker)
                else:
                    worker.kill()
                    if slot.busy == 0:
                        self._draining_slots.pop(id(slot), None)
                slot.changed.notify()

    async def evict(self, user: str, agent: str | None = None) -> None:
        """Stop every worker of a user's agent (or of all their agents): after an upgrade,
        an uninstall, or a revocation of access to its files."""
        for key in [k for k in self._slots if k.user == user and agent in (None, k.agent)]:
            slot = self._slots.pop(key)
            idle, slot.idle = slot.idle, []
            if slot.busy:
                self._draining_slots[id(slot)] = (key.user, slot)  # still counted against the user until they end
            for worker in idle:
                await worker.close()
            # Busy workers finish their call and are then killed on release (slot gone).

    async def stop_user(self, user: str) -> None:
        """Stop every worker of a user now, busy ones included (their calls fail): a cluster
        node that lost the user's lease must not touch their files any more."""
        busy = [w for k, s in self._slots.items() if k.user == user for w in s.working.values()]
        busy += [w for owner, s in self._draining_slots.values() if owner == user for w in s.working.values()]
        await self.evict(user)
        for worker in busy:
            worker.kill()

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        if self._preparing is not None:
            self._preparing.cancel()
        for key in list(self._slots):
            for worker in self._slots.pop(key).idle:
                await worker.close(grace=0.2)

    def count(self) -> int:
        return sum(len(s.idle) + s.busy for s in self._slots.values())

    def use(self, user: str | None = None) -> SandboxUse:
        """Sandboxes alive now, of one user or of everyone: warm and busy workers, builds and tests."""
        workers = memory = 0
        slots = [(k.user, s) for k, s in self._slots.items()]
        slots += list(self._draining_slots.values())
        for owner, slot in slots:
            if user is None or owner == user:
                n = slot.alive()
                workers += n
                memory += n * slot.memory_mb
        for owner, ceilings in self._scratch.items():
            if user is None or owner == user:
                workers += len(ceilings)
                memory += sum(ceilings)
        return SandboxUse(workers, memory)

    @contextlib.asynccontextmanager
    async def scratch(self, user: str, memory_mb: int) -> AsyncIterator[None]:
        """Count a throwaway sandbox (a build, a test run) against the user's quotas while it runs."""
        self._make_room(user, memory_mb)
        self._scratch.setdefault(user, []).append(memory_mb)
        try:
            yield
        finally:
            ceilings = self._scratch.get(user, [])
            if memory_mb in ceilings:
                ceilings.remove(memory_mb)
            if not ceilings:
                self._scratch.pop(user, None)

    def _make_room(self, user: str, memory_mb: int) -> None:
        """Before one more sandbox of `user`: stop idle warm workers until the quotas allow
        it, or refuse. Synchronous, so nothing else starts in between."""
        from dreamer.kernel.users.quotas import exceeded, installation_full

        while True:
            mine = self.use(user)
            over_user = self.quotas is not None and (
                mine.workers + 1 > self.quotas.workers or mine.memory_mb + memory_mb > self.quotas.memory_mb
            )
            over_total = self.max_total is not None and self.use().workers + 1 > self.max_total
            if not over_user and not over_total:
                return
            victim = self._longest_idle(user if over_user else None)
            if victim is None:
                if over_user and self.quotas is not None:
                    if mine.workers + 1 > self.quotas.workers:
                        raise exceeded("workers", mine.workers + 1, self.quotas.workers,
                                       "wait for a call, build or test to finish, or ask the administrator to raise DREAMER_QUOTA_WORKERS")
                    raise exceeded("memory_mb", mine.memory_mb + memory_mb, self.quotas.memory_mb,
                                   "wait for a call, build or test to finish, or ask the administrator to raise DREAMER_QUOTA_MEMORY_MB")
                assert self.max_total is not None
                raise installation_full(self.max_total)
            slot, worker = victim
            slot.idle.remove(worker)
            worker.kill()

    def _longest_idle(self, user: str | None) -> tuple[_Slot, WorkerConnection] | None:
        best: tuple[_Slot, WorkerConnection] | None = None
        for key, slot in self._slots.items():
            if user is not None and key.user != user:
                continue
            for worker in slot.idle:
                if best is None or worker.last_used < best[1].last_used:
                    best = (slot, worker)
        return best

    async def _acquire(
        self, key: WorkerKey, slot: _Slot, spec: Callable[[], SandboxSpec], timeout: float
    ) -> WorkerConnection:
        deadline = time.monotonic() + timeout
        async with slot.changed:
            while True:
                while slot.idle:
                    worker = slot.idle.pop()
                    if worker.alive:
                        slot.busy += 1
                        return worker
                if slot.busy < self.max_per_key:
                    made = spec()
                    memory_mb = made.limits.address_space_mb
                    self._make_room(key.user, memory_mb)  # raises when the quotas leave no room
                    slot.memory_mb = memory_mb
                    slot.busy += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DreamerError(
                        "timeout", f"all {self.max_per_key} workers of {key.agent} stayed busy; try again shortly"
                    )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(slot.changed.wait(), left)
        try:
            process = await self.sandbox.start(made)
        except BaseException:
            async with slot.changed:
                slot.busy -= 1
                slot.changed.notify()
            raise
        self.started += 1
        return WorkerConnection(
            process=process,
            label=f"{key.agent}",
            kill_group=self.sandbox.kill,
            max_log_bytes=self.max_log_bytes,
        )

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(min(30.0, max(self.warm_seconds / 4, 0.5)))
            now = time.monotonic()
            for slot in list(self._slots.values()):
                keep = []
                for worker in slot.idle:
                    if worker.alive and now - worker.last_used < self.warm_seconds:
                        keep.append(worker)
                    else:
                        await worker.close(grace=0.2)
                slot.idle[:] = keep
