"""User leases in PostgreSQL: which node may run a user's warm workers and open their files.

One row per user (`user_leases`). A node takes a user's lease with one conditional upsert:
it gets it when nobody holds it, when it already holds it, or when the holder's lease has
expired on the database's clock. Every take-over (and every take after an expiry) adds one
to the fencing token, so anything still carrying the older token — a forwarded request, a
renewal from a node that was paused past its lease — is refused. Releasing keeps the row
(expired), so the token never goes back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import and_, func, select, text, update
from sqlalchemy.orm import Session

from dreamer.kernel.store.models import ClusterNode, UserLease


@dataclass(frozen=True)
class Holder:
    """Who holds a user's lease now, as the database sees it."""

    node: str
    fence: int
    advertise: str | None  # None when the node row is gone
    node_alive: bool  # the holder renewed its node heartbeat within the lease
    remaining_s: float  # seconds until the user's lease expires (≤ 0: expired)


# A user's lease never outlives its node's own heartbeat lease: it ends at the node's last
# heartbeat + the lease, so a node listed as lost holds no user any more.
_TAKE = text("""
INSERT INTO user_leases (user_id, node, fence, expires_at)
SELECT CAST(:user_id AS integer), n.name, 1, n.heartbeat_at + make_interval(secs => CAST(:lease_s AS double precision))
FROM cluster_nodes n
WHERE n.name = CAST(:node AS varchar) AND n.stopped_at IS NULL
  AND n.heartbeat_at + make_interval(secs => CAST(:lease_s AS double precision)) > now()
ON CONFLICT (user_id) DO UPDATE SET
    node = excluded.node,
    fence = CASE WHEN user_leases.node = excluded.node AND user_leases.expires_at > now()
                 THEN user_leases.fence ELSE user_leases.fence + 1 END,
    expires_at = excluded.expires_at
WHERE user_leases.node = excluded.node OR user_leases.expires_at <= now()
RETURNING fence
""")


def take(session: Session, user_id: int, node: str, lease_s: float) -> int | None:
    """Take or renew `user_id`'s lease for `node`: its fencing token, or None while another
    node's lease on the user has not expired yet."""
    found = session.execute(_TAKE, {"user_id": user_id, "node": node, "lease_s": lease_s}).first()
    return int(found[0]) if found is not None else None


def renew(session: Session, node: str, lease_s: float) -> dict[int, int]:
    """Extend every unexpired lease `node` holds: {user_id: fence} of those it still holds.
    A lease that expired before this renewal is not renewed: someone may have taken it.
    Called in the heartbeat's transaction, so the leases end exactly with the node's own."""
    rows = session.execute(
        update(UserLease).where(UserLease.node == node, UserLease.expires_at > func.now())
        .values(expires_at=func.now() + timedelta(seconds=lease_s))
        .returning(UserLease.user_id, UserLease.fence)
    )
    return {int(u): int(f) for u, f in rows}


def release(session: Session, user_id: int, node: str, fence: int) -> bool:
    """Give the lease up (drain, stop): expire it now, keeping the row and its token."""
    done = session.execute(
        update(UserLease).where(UserLease.user_id == user_id, UserLease.node == node, UserLease.fence == fence)
        .values(expires_at=func.now())
    )
    return bool(getattr(done, "rowcount", 0))


def release_all(session: Session, node: str) -> int:
    done = session.execute(
        update(UserLease).where(UserLease.node == node, UserLease.expires_at > func.now()).values(expires_at=func.now())
    )
    return int(getattr(done, "rowcount", 0) or 0)


def holds(session: Session, user_id: int, node: str, fence: int) -> bool:
    """Does `node` hold `user_id`'s lease with exactly this token, unexpired? (The owner's
    check of a forwarded request: an older token means the sender saw a stale owner.)"""
    return session.scalar(
        select(UserLease.user_id).where(
            UserLease.user_id == user_id, UserLease.node == node, UserLease.fence == fence,
            UserLease.expires_at > func.now(),
        )
    ) is not None


def holder(session: Session, user_id: int, node_lease_s: float) -> Holder | None:
    """The current holder of an unexpired lease on the user, or None when it is free."""
    cutoff = func.now() - timedelta(seconds=node_lease_s)
    row = session.execute(
        select(
            UserLease.node, UserLease.fence, ClusterNode.advertise,
            and_(ClusterNode.stopped_at.is_(None), ClusterNode.heartbeat_at >= cutoff),
            func.extract("epoch", UserLease.expires_at - func.now()),
        ).outerjoin(ClusterNode, ClusterNode.name == UserLease.node)
        .where(UserLease.user_id == user_id, UserLease.expires_at > func.now())
    ).first()
    if row is None:
        return None
    node, fence, advertise, alive, remaining = row
    return Holder(str(node), int(fence), advertise, bool(alive), float(remaining or 0.0))


def leased_elsewhere(session: Session, node: str) -> list[int]:
    """Users whose unexpired lease another node holds: this node must not run their work."""
    return list(session.scalars(
        select(UserLease.user_id).where(UserLease.node != node, UserLease.expires_at > func.now())
    ))


def by_node(session: Session) -> dict[str, list[int]]:
    """Unexpired leases, per node (for `dreamer nodes`)."""
    out: dict[str, list[int]] = {}
    for node, user_id in session.execute(
        select(UserLease.node, UserLease.user_id).where(UserLease.expires_at > func.now())
    ):
        out.setdefault(str(node), []).append(int(user_id))
    return out


__all__ = ["Holder", "by_node", "holder", "holds", "leased_elsewhere", "release", "release_all", "renew", "take"]
