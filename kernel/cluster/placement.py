"""User placement on a cluster node: serve a user here under a lease, or say who does.

A node takes a user's lease (kernel/cluster/leases.py) on the first request or background
run it gets for them, and renews all its leases with its heartbeat. While it holds the
lease only it runs the user's warm workers and opens their agent files. A lease it fails to
renew — taken by another node after it expired, or not renewed for half a lease because
the database was out of reach — stops the user's workers here at once (busy ones too),
before the lease can expire on the database's clock and another node can take it.

Draining gives the leases up one user at a time: no new requests for the user here,
running calls and background attempts finish, the workers stop, the lease is released.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dreamer.kernel.cluster import leases

if TYPE_CHECKING:
    from dreamer.kernel.core import Kernel

log = logging.getLogger("dreamer.cluster.placement")

DRAIN_WAIT_S = 300.0  # the longest a drain waits for one user's running calls and runs


@dataclass(frozen=True)
class Here:
    fence: int


@dataclass(frozen=True)
class Elsewhere:
    node: str
    advertise: str
    fence: int


@dataclass(frozen=True)
class Unavailable:
    """Nobody can serve the user right now: the holder is gone but its lease has not expired,
    or this node is giving the user up. `retry_after_s` says when to ask again."""

    reason: str
    retry_after_s: float


Placed = Here | Elsewhere | Unavailable


@dataclass
class _Held:
    name: str
    fence: int
    until: float  # monotonic: past it the lease is not trusted without asking the database
    since: float  # monotonic: when this node took it (a renewal that began earlier did not see it)


@dataclass
class Placement:
    kernel: "Kernel"
    node: str
    lease_s: float
    held: dict[int, _Held] = field(default_factory=dict)  # user_id -> the lease this node holds
    leaving: set[int] = field(default_factory=set)  # users being given up (drain): refuse new requests
    in_flight: Counter[int] = field(default_factory=Counter)  # requests being served here, per user
    closed: bool = False  # draining, or the node lease not renewed: take no user
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    # -- placing a user -----------------------------------------------------------------------

    async def place(self, user_id: int, name: str, *, take: bool = True) -> Placed:
        """Where `user_id`'s request must run. Takes the lease when it is free (unless `take`
        is false: a draining node never takes a user)."""
        if user_id in self.leaving:
            return Unavailable(f"node {self.node} is handing user {name} over to another node", 1.0)
        held = self.held.get(user_id)
        if held is not None and time.monotonic() < held.until:
            return Here(held.fence)
        return await asyncio.to_thread(self._place_in_store, user_id, name, take and not self.closed)

    def _place_in_store(self, user_id: int, name: str, take: bool) -> Placed:
        store = self.kernel.store
        started = time.monotonic()
        if take:
            with store.session() as s:
                fence = leases.take(s, user_id, self.node, self.lease_s)
            if fence is not None:
                self._hold(user_id, name, fence, started)
                return Here(fence)
        with store.session() as s:
            found = leases.holder(s, user_id, self.lease_s)
        if found is None:
            return Unavailable(f"node {self.node} takes no new users now (draining or cut off); ask again", 1.0)
        if found.node == self.node:  # held here, but not trusted locally any more: it is ours after all
            if take:
                self._hold(user_id, name, found.fence, started)
                return Here(found.fence)
            return Unavailable(f"node {self.node} is handing user {name} over; ask again", 1.0)
        if found.node_alive and found.advertise:
            return Elsewhere(found.node, found.advertise, found.fence)
        return Unavailable(
            f"user {name}'s node {found.node} stopped answering; another node takes them over once its lease "
            f"ends in {max(found.remaining_s, 0.0):.0f} s", max(1.0, found.remaining_s),
        )

    def _hold(self, user_id: int, name: str, fence: int, started: float) -> None:
        before = self.held.get(user_id)
        if before is None or before.fence != fence:
            log.info("node %s holds user %s (fence %d)", self.node, name, fence)
        # Trusted for half a lease from before the database extended it: the heartbeat's
        # fence stops the workers at that point if no renewal came, well before it expires.
        since = before.since if before is not None and before.fence == fence else started
        self.held[user_id] = _Held(name, fence, started + self.lease_s / 2, since)

    # -- renewing and losing --------------------------------------------------------------------

    async def renewed(self, still: dict[int, int], started: float) -> None:
        """After a renewal that began at `started` (monotonic): stop the users whose lease went elsewhere."""
        for user_id, h in self.held.items():
            if still.get(user_id) == h.fence:
                h.until = max(h.until, started + self.lease_s / 2)
        lost = [u for u, h in self.held.items() if h.since < started and still.get(u) != h.fence]
        for user_id in lost:
            held = self.held.pop(user_id)
            log.warning("node %s lost user %s's lease (fence %d); stopping their workers here", self.node, held.name,
                        held.fence)
            await self._stop_user(held.name)

    async def lose_all(self, why: str) -> None:
        """The leases can no longer be trusted (no renewal for half a lease): stop every held
        user's workers here before their leases can expire in the store."""
        held, self.held = self.held, {}
        for h in held.values():
            log.error("node %s stops user %s's workers: %s", self.node, h.name, why)
            await self._stop_user(h.name)

    async def _stop_user(self, name: str) -> None:
        k = self.kernel
        await k.pool.stop_user(name)
        if k.tools is not None:
            await k.tools.evict(name)

    # -- draining -------------------------------------------------------------------------------

    async def give_up_all(self) -> None:
        """Drain: hand every held user over, one at a time, and never take a new one."""
        async with self._lock:
            for user_id in list(self.held):
                await self._give_up(user_id)

    async def _give_up(self, user_id: int) -> None:
        held = self.held.get(user_id)
        if held is None:
            return
        self.leaving.add(user_id)
        try:
            deadline = time.monotonic() + DRAIN_WAIT_S
            while (self.in_flight[user_id] or self.kernel.runner.running_for(user_id)) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            await self._stop_user(held.name)
            self.held.pop(user_id, None)
            with self.kernel.store.session() as s:
                leases.release(s, user_id, self.node, held.fence)
            log.warning("node %s gave user %s up (fence %d)", self.node, held.name, held.fence)
        finally:
            self.leaving.discard(user_id)

    def release_all(self) -> None:
        """A clean stop: the workers are gone already; let the next node take the users at once."""
        self.held.clear()
        with self.kernel.store.session() as s:
            leases.release_all(s, self.node)

    def users_elsewhere(self) -> list[int]:
        """Blocking: users another node holds (the runner leaves their runs to that node)."""
        with self.kernel.store.session() as s:
            return leases.leased_elsewhere(s, self.node)


__all__ = ["Elsewhere", "Here", "Placed", "Placement", "Unavailable"]
