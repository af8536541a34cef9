"""What one node changes in memory, every node changes: cluster events over LISTEN/NOTIFY.

A node that drops a cache entry (an uninstall, a grant change), empties its token cache
or wakes its streams for a revocation publishes a `cluster_events` row and a NOTIFY
carrying its id, in one transaction. Every node's listener thread reads the rows after
the last id it applied, applies them and records that id in `cluster_nodes.applied_event`.
The publisher then waits (bounded, `ACK_TIMEOUT_S`) until every live node has recorded
it, so when the request that revoked a grant answers, the next call refuses on every
node, not just eventually.

While the listener is not connected the node cannot hear changes, so its caches are
switched off (every read goes to the store) until it is back and has emptied them.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import timedelta
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from sqlalchemy import delete, func, insert, select, text

from dreamer.kernel.cluster import nodes
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ClusterEvent, ClusterNode

log = logging.getLogger("dreamer.cluster.bus")

CHANNEL = "dreamer_cluster"
ACK_TIMEOUT_S = 3.0
ACK_POLL_S = 0.005
RECONNECT_S = 1.0

Handler = Callable[[dict[str, Any]], None]


def psycopg_conninfo(store: Store) -> str:
    """The store's URL as libpq understands it (no SQLAlchemy driver suffix)."""
    return store.url.set(drivername="postgresql").render_as_string(hide_password=False)


@dataclass
class ClusterBus:
    store: Store
    me: nodes.NodeIdentity
    handlers: dict[str, Handler] = field(default_factory=dict)
    # Called with False when the listener loses its connection and True once it is back
    # and has caught up: the caches are off in between.
    on_health: Callable[[bool], None] = lambda healthy: None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _applied: int = 0
    connected: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._listen_forever, name="dreamer-cluster-bus", daemon=True)
        self._thread.start()
        # Start serving only once changes can be heard (bounded: the store answered already).
        self.connected.wait(timeout=10)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- publishing ------------------------------------------------------------------------

    def publish(self, kind: str, body: dict[str, Any]) -> None:
        """Tell every other node; returns once the live ones applied it (or ACK_TIMEOUT_S passed)."""
        with self.store.session() as s:
            event_id = s.execute(
                insert(ClusterEvent).values(at=func.now(), origin=self.me.name, kind=kind, body=body).returning(ClusterEvent.id)
            ).scalar_one()
            s.execute(text("SELECT pg_notify(:channel, :payload)"), {"channel": CHANNEL, "payload": str(event_id)})
        self._wait_for_acks(event_id, kind)

    def _wait_for_acks(self, event_id: int, kind: str) -> None:
        deadline = time.monotonic() + ACK_TIMEOUT_S
        cutoff = func.now() - _seconds(self.me.lease_s)
        behind = select(func.count()).select_from(ClusterNode).where(
            ClusterNode.name != self.me.name, ClusterNode.stopped_at.is_(None),
            ClusterNode.heartbeat_at >= cutoff, ClusterNode.applied_event < event_id,
        )
        while True:
            with self.store.session() as s:
                waiting = s.scalar(behind) or 0
            if not waiting:
                return
            if time.monotonic() > deadline:
                log.warning("%d live node(s) did not apply cluster event %d (%s) within %.0f s", waiting, event_id, kind, ACK_TIMEOUT_S)
                return
            time.sleep(ACK_POLL_S)

    # -- listening -------------------------------------------------------------------------

    def _listen_forever(self) -> None:
        first = True
        while not self._stop.is_set():
            try:
                with psycopg.connect(psycopg_conninfo(self.store), autocommit=True,
                                     application_name=f"dreamer-bus-{self.me.name}") as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    # Listening before reading the position: nothing published in between is missed.
                    if first:
                        self._applied = self._record(conn, None)
                    else:
                        self._catch_up(conn)
                    self.connected.set()
                    self.on_health(True)
                    first = False
                    while not self._stop.is_set():
                        woke = False
                        for _ in conn.notifies(timeout=1.0, stop_after=1):
                            woke = True
                        if woke:
                            self._catch_up(conn)
            except (psycopg.Error, OSError) as exc:
                if self._stop.is_set():
                    return
                if self.connected.is_set() or first:
                    log.warning("the cluster listener lost the database (%s); caches are off until it is back", exc)
                self.connected.clear()
                self.on_health(False)
                self._stop.wait(RECONNECT_S)

    def _catch_up(self, conn: psycopg.Connection[Any]) -> None:
        rows = conn.execute(
            "SELECT id, origin, kind, body FROM cluster_events WHERE id > %s ORDER BY id", (self._applied,)
        ).fetchall()
        for event_id, origin, kind, body in rows:
            if origin != self.me.name:
                self._apply(kind, body if isinstance(body, dict) else json.loads(body))
            self._applied = event_id
        if rows:
            self._record(conn, self._applied)

    def _apply(self, kind: str, body: dict[str, Any]) -> None:
        handler = self.handlers.get(kind)
        if handler is None:
            log.warning("cluster event of unknown kind %r ignored", kind)
            return
        try:
            handler(body)
        except Exception:
            log.exception("applying cluster event %s failed", kind)

    def _record(self, conn: psycopg.Connection[Any], applied: int | None) -> int:
        """Write how far this node has applied; with None, start from the newest event."""
        if applied is None:
            found = conn.execute("SELECT coalesce(max(id), 0) FROM cluster_events").fetchone()
            applied = int(found[0]) if found else 0
        conn.execute("UPDATE cluster_nodes SET applied_event = %s WHERE name = %s", (applied, self.me.name))
        return applied


def prune(store: Store, keep_s: float = 3600.0) -> None:
    """Events older than an hour have been applied by every node that is alive."""
    with store.session() as s:
        s.execute(delete(ClusterEvent).where(ClusterEvent.at < func.now() - _seconds(keep_s)))


def _seconds(n: float) -> timedelta:
    return timedelta(seconds=n)


__all__ = ["ClusterBus", "prune", "psycopg_conninfo"]
