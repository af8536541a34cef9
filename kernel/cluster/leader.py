"""One leader per installation: a PostgreSQL advisory lock held by one node's connection.

The leader runs the cron scheduler and takes over the work of nodes that died. The lock
lives as long as the connection that took it: a node that is killed loses its
connection, PostgreSQL drops the lock, and another node's next try takes it. A leader
that cannot reach the database any more steps down at once (and so stops firing).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg

from dreamer.kernel.store.db import Store

log = logging.getLogger("dreamer.cluster.leader")

PG_LEADER_LOCK = 0x6472_6D03  # "drm" 03, beside the store's migrate and audit locks


@dataclass
class LeaderLease:
    store: Store
    conninfo: str
    node: str
    on_elected: Callable[[], None]
    on_deposed: Callable[[], None]
    _conn: psycopg.Connection[Any] | None = None

    @property
    def leading(self) -> bool:
        return self._conn is not None

    def tick(self) -> None:
        """Try to become leader, or check that the lock's connection is still there.
        Blocking (short queries); the runtime calls it off the event loop."""
        if self._conn is not None:
            try:
                self._conn.execute("SELECT 1")
                return
            except (psycopg.Error, OSError) as exc:
                log.warning("node %s lost the leader's connection (%s); stepping down", self.node, exc)
                self._drop()
                self.on_deposed()
                return
        conn: psycopg.Connection[Any] | None = None
        try:
            conn = psycopg.connect(self.conninfo, autocommit=True, application_name=f"dreamer-leader-{self.node}")
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (PG_LEADER_LOCK,)).fetchone()
        except (psycopg.Error, OSError) as exc:
            log.warning("node %s could not try for the leader lock: %s", self.node, exc)
            if conn is not None:
                conn.close()
            return
        if row and row[0]:
            self._conn = conn
            log.info("node %s is the leader", self.node)
            self.on_elected()
        else:
            conn.close()

    def release(self) -> None:
        if self._conn is not None:
            self._drop()
            self.on_deposed()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            # Unlock before closing: the server drops a closed session's locks only when
            # its backend has exited, a moment after the client is gone, and a node that
            # steps down on purpose should hand over at once.
            conn.execute("SELECT pg_advisory_unlock(%s)", (PG_LEADER_LOCK,))
        except (psycopg.Error, OSError):
            pass  # the connection is already broken: its backend ends and the lock goes with it
        try:
            conn.close()
        except (psycopg.Error, OSError):
            pass


def current_leader(conninfo: str) -> str | None:
    """The node holding the leader lock, read from pg_locks (None when nobody holds it)."""
    try:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            row = conn.execute(
                "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = %s AND l.objsubid = 1 "
                "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                (PG_LEADER_LOCK,),
            ).fetchone()
    except (psycopg.Error, OSError):
        return None
    name = str(row[0]) if row else ""
    return name.removeprefix("dreamer-leader-") if name.startswith("dreamer-leader-") else None
