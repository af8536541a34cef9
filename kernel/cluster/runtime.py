"""A kernel as one node of an installation: joins the node table, hears the other nodes,
renews its lease, and (as leader) runs the cron scheduler and takes over dead nodes' work.

Built by the kernel only when `settings.node` is set (PostgreSQL required); otherwise none
of this exists and a kernel runs alone, as it always did.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from typing import TYPE_CHECKING, Any

import httpx
import psycopg

from dreamer.kernel.cluster import leases, nodes
from dreamer.kernel.cluster.bus import ClusterBus, prune, psycopg_conninfo
from dreamer.kernel.cluster.leader import LeaderLease, current_leader
from dreamer.kernel.cluster.placement import Here, Placement

if TYPE_CHECKING:
    from dreamer.kernel.core import Kernel

log = logging.getLogger("dreamer.cluster")

PG_START_LOCK = 0x6472_6D04  # "drm" 04: one node at a time runs the first-start steps


class ClusterRuntime:
    def __init__(self, kernel: "Kernel") -> None:
        settings = kernel.settings
        assert settings.node and settings.advertise
        self.kernel = kernel
        self.me = nodes.NodeIdentity(settings.node, settings.advertise, settings.node_lease_s)
        self.conninfo = psycopg_conninfo(kernel.store)
        self.bus = ClusterBus(kernel.store, self.me, on_health=self._bus_health)
        self.leader = LeaderLease(kernel.store, self.conninfo, self.me.name, self._elected, self._deposed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._last_beat = time.monotonic()
        self._fenced = False
        self.draining = False  # `dreamer nodes drain`: unhealthy for the load balancer, no new background work
        self._start_conn: psycopg.Connection[Any] | None = None
        self.placement = Placement(kernel, self.me.name, self.me.lease_s)
        self.forward_key = b""  # the shared key that signs node-to-node forwarded requests (set at join)
        self._forwarder: httpx.AsyncClient | None = None
        self._draining_task: asyncio.Task[None] | None = None

    # -- start and stop -------------------------------------------------------------------------

    def lock_start(self) -> None:
        """Held from migration to the end of the first-start steps: two nodes starting at once
        would both create the local administrator and the demo data."""
        self._start_conn = psycopg.connect(self.conninfo, autocommit=True)
        self._start_conn.execute("SELECT pg_advisory_lock(%s)", (PG_START_LOCK,))

    def unlock_start(self) -> None:
        conn, self._start_conn = self._start_conn, None
        if conn is not None:
            conn.close()

    def join(self) -> None:
        """Register in the node table and start hearing the others (before serving anything)."""
        with self.kernel.store.session() as s:
            nodes.register(s, self.me)
        k = self.kernel
        self.bus.handlers = {
            "forget": lambda b: k.installer.cache.forget_here(int(b["user_id"]), str(b["agent"])),
            "tokens": lambda b: k.tokens.clear_here(),
            "revoked": lambda b: self._on_loop(k.revocations.bump_here),
            "cron": lambda b: self._on_loop(self._cron_changed),
            "cancel": lambda b: self._on_loop(lambda: k.runner.cancel_here(str(b["id"]))),
        }
        k.installer.cache.on_forget = lambda user_id, agent: self.bus.publish("forget", {"user_id": user_id, "agent": agent})
        k.tokens.on_clear = lambda: self.bus.publish("tokens", {})
        k.revocations.on_bump = lambda: self.bus.publish("revoked", {})
        k.runner.on_cancel = lambda run_id: self.bus.publish("cancel", {"id": run_id})
        k.runner.users_elsewhere = self.placement.users_elsewhere
        k.runner.may_run = self._may_run
        self.forward_key = self.shared_key("placement-forward")
        self.bus.start()

    async def start(self) -> None:
        """After the kernel's services started: heartbeats, and trying for leadership."""
        self._loop = asyncio.get_running_loop()
        self._last_beat = time.monotonic()
        self._tasks = [self._loop.create_task(self._heartbeat_forever()), self._loop.create_task(self._lead_forever())]

    async def stop(self) -> None:
        tasks = self._tasks + ([self._draining_task] if self._draining_task is not None else [])
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await asyncio.to_thread(self.leader.release)
        # The users' work stops here before their leases are released, so the next node to take
        # one never finds this node still in the user's files.
        with contextlib.suppress(Exception):
            await self.kernel.runner.stop()
            await self.placement.lose_all("the node is stopping")
            await asyncio.to_thread(self.placement.release_all)
        if self._forwarder is not None:
            await self._forwarder.aclose()
        with contextlib.suppress(Exception):
            with self.kernel.store.session() as s:
                nodes.leave(s, self.me.name)
        self.bus.stop()

    # -- the lease --------------------------------------------------------------------------

    async def _heartbeat_forever(self) -> None:
        while True:
            try:
                started = time.monotonic()
                ok, draining, still = await asyncio.to_thread(self._beat)
                if draining and not self.draining:
                    log.warning("node %s is draining: it fails its health check, takes no new background work "
                                "and hands its users over one at a time", self.me.name)
                    self.draining = True
                    self.placement.closed = True
                    self.kernel.runner.paused = True
                    self._draining_task = asyncio.get_running_loop().create_task(self.placement.give_up_all())
                if ok:
                    self._last_beat = started
                    await self.placement.renewed(still, started)
                    if self._fenced:
                        log.warning("node %s has its lease again; it takes work again", self.me.name)
                        self._fenced = False
                        self.placement.closed = self.draining
                        self.kernel.runner.paused = self.draining
                        self.kernel.runner.wake()
            except Exception as exc:  # noqa: BLE001 - a database outage must not end the heartbeat
                log.warning("node %s could not renew its lease: %s", self.me.name, exc)
            # Past half the lease without a renewal, the others may soon take this node's work
            # over: stop it here first, so one run never has two attempts at once.
            if not self._fenced and time.monotonic() - self._last_beat > self.me.lease_s / 2:
                log.error("node %s has not renewed its lease for %.0f s; it stops its background work",
                          self.me.name, time.monotonic() - self._last_beat)
                self._fenced = True
                self.placement.closed = True
                await self.kernel.runner.fence()
                await self.placement.lose_all("its node lease was not renewed for half a lease")
            await asyncio.sleep(self.me.heartbeat_s)

    def _beat(self) -> tuple[bool, bool, dict[int, int]]:
        with self.kernel.store.session() as s:
            ok, draining = nodes.beat(s, self.me.name)
            # In the same transaction (one now()): the users' leases end exactly with the node's
            # own, and only while it has one (a node marked stopped holds nobody).
            still = leases.renew(s, self.me.name, self.me.lease_s) if ok else {}
        return ok, draining, still

    # -- placement ------------------------------------------------------------------------------

    async def _may_run(self, user_id: int) -> bool:
        """Before claiming a user's background run: take (or hold) the user's lease."""
        if self.draining or self._fenced:
            return False
        name = await asyncio.to_thread(self._user_name, user_id)
        if name is None:
            return False
        return isinstance(await self.placement.place(user_id, name), Here)

    def _user_name(self, user_id: int) -> str | None:
        from dreamer.kernel.store.models import User

        held = self.placement.held.get(user_id)
        if held is not None:
            return held.name
        with self.kernel.store.session() as s:
            user = s.get(User, user_id)
            return user.name if user is not None else None

    def forward_client(self) -> httpx.AsyncClient:
        """One pooled client for node-to-node forwarding (connections to the owners stay open)."""
        if self._forwarder is None:
            # No read timeout of its own: a forwarded call or chat stream lasts as long as it would here.
            self._forwarder = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=3.0), follow_redirects=False)
        return self._forwarder

    # -- leadership -------------------------------------------------------------------------

    async def _lead_forever(self) -> None:
        while True:
            try:
                await asyncio.to_thread(self.leader.tick)
                if self.leader.leading and not self._fenced:
                    await asyncio.to_thread(self._take_over_lost_nodes)
            except Exception:
                log.exception("node %s: the leader's round failed", self.me.name)
            await asyncio.sleep(self.me.heartbeat_s)

    def _take_over_lost_nodes(self) -> None:
        from dreamer.kernel.invocations.records import interrupted_on_restart
        from dreamer.kernel.runs import queue

        with self.kernel.store.session() as s:
            lost = nodes.lost(s, self.me.lease_s)
        for name in lost:
            counts = queue.recover(self.kernel.store, node=name)
            direct = interrupted_on_restart(self.kernel.store, node=name)
            if any(counts.values()) or direct:
                log.warning("node %s's lease ran out: %d background runs queued again, %d failed, %d calls interrupted",
                            name, counts["requeued"], counts["failed"], direct)
                self.kernel.runner.wake()
        prune(self.kernel.store)

    def _elected(self) -> None:
        self._on_loop(self._resume_cron)

    def _deposed(self) -> None:
        self._on_loop(self._pause_cron)

    def _resume_cron(self) -> None:
        cron = self.kernel.triggers.cron
        if cron is not None:
            cron.lead(True)

    def _pause_cron(self) -> None:
        cron = self.kernel.triggers.cron
        if cron is not None:
            cron.lead(False)

    def _cron_changed(self) -> None:
        cron = self.kernel.triggers.cron
        if cron is not None and self.leader.leading:
            cron.scheduler.wakeup()

    def cron_changed(self) -> None:
        """This node changed cron jobs in the shared job store: the leader must look again."""
        if self.leader.leading:
            self._cron_changed()
        else:
            self.bus.publish("cron", {})

    # -- plumbing -----------------------------------------------------------------------------

    def _bus_health(self, healthy: bool) -> None:
        k = self.kernel
        k.installer.cache.set_enabled(healthy)
        k.tokens.set_enabled(healthy)
        if healthy:
            self._on_loop(k.revocations.bump_here)  # streams recheck what they may have missed

    def _on_loop(self, fn: Any) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(fn)

    def shared_key(self, name: str) -> bytes:
        """A 32-byte key every node of the installation shares, made by whichever asks first."""
        from sqlalchemy import select
        from sqlalchemy.dialects.postgresql import insert

        from dreamer.kernel.store.models import ClusterSecret

        with self.kernel.store.session() as s:
            s.execute(insert(ClusterSecret).values(name=name, value=secrets.token_hex(32)).on_conflict_do_nothing())
        with self.kernel.store.session() as s:
            return bytes.fromhex(s.scalar(select(ClusterSecret.value).where(ClusterSecret.name == name)) or "")

    def listing(self) -> list[dict[str, Any]]:
        with self.kernel.store.session() as s:
            return nodes.listing(s, self.me.lease_s, current_leader(self.conninfo))
