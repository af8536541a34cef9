"""Warm workers per (user, agent, bundle path).

Starting a sandboxed interpreter costs tens of milliseconds, so a worker stays
alive after a call and is reused. A key may have several workers: a second call
arriving while the first runs gets its own, which is also what keeps two
independent call chains (A→B and B→A from different requests) from waiting on
each other forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from dreamer.kernel.errors import DreamerError
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


class WorkerPool:
    def __init__(
        self,
        sandbox: Sandbox,
        *,
        max_per_key: int = 4,
        warm_seconds: float = 300.0,
        max_log_bytes: int = 1024 * 1024,
    ) -> None:
        self.sandbox = sandbox
        self.max_per_key = max_per_key
        self.warm_seconds = warm_seconds
        self.max_log_bytes = max_log_bytes
        self._slots: dict[WorkerKey, _Slot] = {}
        self._reaper: asyncio.Task[None] | None = None
        self.started = 0  # workers started since boot, for tests and benchmarks

    def start_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())

    @contextlib.asynccontextmanager
    async def lease(
        self, key: WorkerKey, spec: Callable[[], SandboxSpec], *, timeout: float
    ) -> AsyncIterator[WorkerConnection]:
        """Yield a worker for exclusive use; it goes back warm if it is still healthy."""
        slot = self._slots.setdefault(key, _Slot())
        worker = await self._acquire(key, slot, spec, timeout)
        try:
            yield worker
        finally:
            async with slot.changed:
                slot.busy -= 1
                if worker.alive and self._slots.get(key) is slot:
                    slot.idle.append(worker)
                else:
                    worker.kill()
                slot.changed.notify()

    async def evict(self, user: str, agent: str | None = None) -> None:
        """Stop every worker of a user's agent (or of all their agents): after an upgrade,
        an uninstall, or a revocation of access to its files."""
        for key in [k for k in self._slots if k.user == user and agent in (None, k.agent)]:
            slot = self._slots.pop(key)
            for worker in slot.idle:
                await worker.close()
            # Busy workers finish their call and are then killed on release (slot gone).

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        for key in list(self._slots):
            for worker in self._slots.pop(key).idle:
                await worker.close(grace=0.2)

    def count(self) -> int:
        return sum(len(s.idle) + s.busy for s in self._slots.values())

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
            process = await self.sandbox.start(spec())
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
