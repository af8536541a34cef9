"""The node table: who is part of the installation, alive by heartbeat, and whom they serve.

Times are the database's own clock (`now()`), so nodes with skewed clocks still agree on
which heartbeat is stale.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.models import ClusterEvent, ClusterNode, Invocation, User, UserLease

SERVED_WINDOW = timedelta(minutes=10)  # "users a node serves": those it ran work for this recently


@dataclass(frozen=True)
class NodeIdentity:
    name: str
    advertise: str
    lease_s: float

    @property
    def heartbeat_s(self) -> float:
        # Four beats per lease: one lost packet or a slow query never costs a live node its lease.
        return self.lease_s / 4


def register(session: Session, me: NodeIdentity) -> None:
    """Join the installation, or refuse when a live process already holds this name."""
    now = _db_now(session)
    row = session.get(ClusterNode, me.name, with_for_update=True)
    if row is not None and row.stopped_at is None and _aware(row.heartbeat_at) > now - timedelta(seconds=me.lease_s):
        age = (now - _aware(row.heartbeat_at)).total_seconds()
        raise DreamerError(
            "conflict",
            f"node {me.name} is already running (pid {row.pid}, heartbeat {age:.0f} s ago); stop it, or wait "
            f"{me.lease_s:.0f} s after it died, or start this one with another --node name",
        )
    latest = session.scalar(select(func.max(ClusterEvent.id))) or 0
    values: dict[str, Any] = dict(
        advertise=me.advertise, pid=os.getpid(), started_at=now, heartbeat_at=now, stopped_at=None, applied_event=latest,
        draining=False,
    )
    session.execute(
        pg_insert(ClusterNode).values(name=me.name, **values).on_conflict_do_update(index_elements=["name"], set_=values)
    )


def beat(session: Session, name: str) -> tuple[bool, bool]:
    """Renew the lease: (renewed, draining). Not renewed when the row is gone or marked stopped."""
    found = session.execute(
        update(ClusterNode).where(ClusterNode.name == name, ClusterNode.stopped_at.is_(None))
        .values(heartbeat_at=func.now()).returning(ClusterNode.draining)
    ).first()
    return (found is not None, bool(found[0]) if found is not None else False)


def drain(session: Session, name: str) -> None:
    """Ask a node to stop taking work; it sees it at its next heartbeat."""
    done = session.execute(
        update(ClusterNode).where(ClusterNode.name == name, ClusterNode.stopped_at.is_(None)).values(draining=True)
    )
    if not getattr(done, "rowcount", 0):
        raise DreamerError("not_found", f"no running node {name[:64]!r}; `dreamer nodes` lists them")


def leave(session: Session, name: str) -> None:
    session.execute(update(ClusterNode).where(ClusterNode.name == name).values(stopped_at=func.now()))


def lost(session: Session, lease_s: float) -> list[str]:
    """Nodes that neither stopped nor renewed their lease in time: they died."""
    cutoff = func.now() - timedelta(seconds=lease_s)
    return list(session.scalars(
        select(ClusterNode.name).where(ClusterNode.stopped_at.is_(None), ClusterNode.heartbeat_at < cutoff)
    ))


def live_others(session: Session, me: str, lease_s: float) -> list[str]:
    cutoff = func.now() - timedelta(seconds=lease_s)
    return list(session.scalars(
        select(ClusterNode.name).where(ClusterNode.name != me, ClusterNode.stopped_at.is_(None), ClusterNode.heartbeat_at >= cutoff)
    ))


def listing(session: Session, lease_s: float, leader: str | None = None) -> list[dict[str, Any]]:
    """Every node with its health and the users it ran work for in the last ten minutes."""
    now = _db_now(session)
    since = now - SERVED_WINDOW
    served: dict[str, list[str]] = {}
    for node, name in session.execute(
        select(Invocation.node, User.name).join(User, User.id == Invocation.user_id)
        .where(Invocation.node.is_not(None), Invocation.created_at >= since).distinct().order_by(User.name)
    ):
        served.setdefault(str(node), []).append(name)
    # The users each node holds the lease of now (kernel/cluster/placement.py): it runs their workers.
    holding: dict[str, list[str]] = {}
    for node, name in session.execute(
        select(UserLease.node, User.name).join(User, User.id == UserLease.user_id)
        .where(UserLease.expires_at > func.now()).order_by(User.name)
    ):
        holding.setdefault(str(node), []).append(name)
    out = []
    for row in session.scalars(select(ClusterNode).order_by(ClusterNode.name)):
        age = (now - _aware(row.heartbeat_at)).total_seconds()
        health = "stopped" if row.stopped_at is not None else ("lost" if age > lease_s else (
            "draining" if row.draining else "alive"))
        out.append({
            "name": row.name, "advertise": row.advertise, "pid": row.pid, "health": health,
            "heartbeat_age_s": round(age, 1), "started_at": _aware(row.started_at).isoformat(),
            "leader": row.name == leader and health == "alive", "users": served.get(row.name, []),
            "holds": holding.get(row.name, []),
        })
    return out


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def _db_now(session: Session) -> datetime:
    found = session.scalar(select(func.now()))
    return _aware(found) if isinstance(found, datetime) else datetime.now(timezone.utc)
