"""The durable queue of background invocations: rows of the `invocations` table.

The store is the queue, so a kernel that dies loses nothing: `queued` rows wait
for the next start, and `running` rows (their worker died with the kernel) are
put back or failed by their retry policy in `recover`. Every change of state is
one conditional UPDATE, so a claim, a cancel and a finish cannot overwrite each other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import func, insert, or_, select, update

from dreamer.kernel.invocations.records import QueuedRun
from dreamer.kernel.runs.retry import retry_delay
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Invocation, InvocationLog, User
from dreamer.kernel.store.tables import rowcount, table

TERMINAL = ("succeeded", "failed", "cancelled")


def now() -> datetime:
    return datetime.now(timezone.utc)


def recover(store: Store, node: str | None = None) -> dict[str, int]:
    """At start: background invocations a dead kernel left running get another attempt
    when their policy allows one (at-least-once), else fail as interrupted.

    With `node`, only the attempts that node was running: a node's own at its start, a
    dead node's when the leader takes its work over (kernel/cluster/runtime.py). Each row
    changes only if it is still that attempt, so two takers never both re-queue it."""
    counts = {"requeued": 0, "failed": 0}
    at = now()
    with store.session() as s:
        mine = select(Invocation.id, Invocation.attempt, Invocation.max_attempts).where(
            Invocation.status == "running", Invocation.background.is_(True)
        )
        if node is not None:
            mine = mine.where(Invocation.node == node)
        rows = s.execute(mine).all()
        for run_id, attempt, max_attempts in rows:
            again = attempt < max_attempts
            done = s.execute(
                update(Invocation)
                .where(Invocation.id == run_id, Invocation.status == "running", Invocation.attempt == attempt)
                .values(
                    status="queued" if again else "failed",
                    error_code="interrupted",
                    error_message=f"the kernel stopped during attempt {attempt}"
                    + ("; it will run again" if again else f", the last of {max_attempts} its retry policy allows"),
                    finished_at=None if again else at,
                    run_after=None,
                    node=None,
                )
            )
            if not rowcount(done):
                continue
            s.execute(
                insert(InvocationLog).values(
                    invocation_id=run_id, at=at, stream="kernel", level="warning",
                    message=f"the kernel stopped during attempt {attempt}; "
                    + ("queued again" if again else "no attempts left, so it failed"),
                )
            )
            counts["requeued" if again else "failed"] += 1
    return counts


def due(
    store: Store,
    *,
    per_user: int,
    per_agent: int,
    running_users: Mapping[int, int] | None = None,
    running_agents: Mapping[tuple[int, str], int] | None = None,
    limit: int = 100,
    max_groups: int = 1000,
    skip_users: Sequence[int] = (),
) -> list[tuple[str, int, str]]:
    """Queued invocations whose time has come, in the order they should start: (id, user_id, agent).

    Fair share, so one user's backlog costs the others nothing: each (user, agent) offers
    only the rows it could start now (at most `per_agent` minus what it runs), each user
    interleaves their agents round-robin and offers at most `per_user` minus what they
    run, and the users' offers are merged least-loaded first, then oldest first. A user
    with 20,000 queued rows offers the same few rows as a user with one, and a user at
    their limit offers none. The work per call is one index scan for the (user, agent)
    groups and one short index seek per group (ix_invocations_queue), never the whole queue.
    """
    users = {u: n for u, n in (running_users or {}).items() if n > 0}
    agents = {k: n for k, n in (running_agents or {}).items() if n > 0}
    # Users at their limit, and on a cluster node the users another node holds (their runs are its).
    full = [u for u, n in users.items() if n >= per_user] + list(skip_users)
    at = now()
    inv = table(Invocation).c
    ready = (inv.status == "queued", or_(inv.run_after.is_(None), inv.run_after <= at))
    offers: dict[int, list[tuple[int, datetime, str, str]]] = {}
    with store.session() as s:
        heads = select(inv.user_id, inv.agent, func.min(inv.created_at)).where(*ready)
        if full:
            heads = heads.where(inv.user_id.notin_(full))
        groups = [
            (u, a, head) for u, a, head in s.execute(heads.group_by(inv.user_id, inv.agent))
            if agents.get((u, a), 0) < per_agent
        ]
        # Bounded work per fill: the groups likeliest to start first (least-loaded, oldest head).
        groups.sort(key=lambda g: (users.get(g[0], 0), agents.get((g[0], g[1]), 0), g[2]))
        for u, a, _ in groups[:max_groups]:
            busy = agents.get((u, a), 0)
            rows = s.execute(
                select(inv.id, inv.created_at).where(*ready, inv.user_id == u, inv.agent == a)
                .order_by(inv.created_at, inv.id).limit(per_agent - busy)
            )
            for rank, (run_id, created) in enumerate(rows, start=1):
                offers.setdefault(u, []).append((busy + rank, created, run_id, a))
    merged: list[tuple[int, datetime, str, int, str]] = []
    for u, offered in offers.items():
        offered.sort()  # each agent's next row before any agent's one after it: round-robin
        for n, (_, created, run_id, a) in enumerate(offered[: per_user - users.get(u, 0)], start=1):
            merged.append((users.get(u, 0) + n, created, run_id, u, a))
    merged.sort()
    return [(run_id, u, a) for _, _, run_id, u, a in merged[:limit]]


def running_counts(store: Store) -> tuple[Counter[int], Counter[tuple[int, str]]]:
    """Background attempts running now on every node: per user, per (user, agent). Two nodes
    filling at the same moment may each start one more than the other saw (at most one
    per node past a limit, for as long as those attempts run)."""
    users: Counter[int] = Counter()
    agents: Counter[tuple[int, str]] = Counter()
    with store.session() as s:
        for user_id, agent, n in s.execute(
            select(Invocation.user_id, Invocation.agent, func.count())
            .where(Invocation.status == "running", Invocation.background.is_(True))
            .group_by(Invocation.user_id, Invocation.agent)
        ):
            users[user_id] += n
            agents[(user_id, agent)] += n
    return users, agents


def next_due_at(store: Store) -> datetime | None:
    """When the earliest queued invocation waiting for a retry delay may run."""
    with store.session() as s:
        found = s.scalar(select(func.min(Invocation.run_after)).where(Invocation.status == "queued"))
    if found is not None and found.tzinfo is None:
        found = found.replace(tzinfo=timezone.utc)  # SQLite hands back naive times
    return found


def claim(store: Store, run_id: str, node: str | None = None) -> QueuedRun | None:
    """Take a queued invocation for one attempt: running, attempt + 1, on `node`. None if
    someone (a cancel, another node) got there first.

    The conditional UPDATE alone makes the claim exclusive. On PostgreSQL the row is first
    locked with FOR UPDATE SKIP LOCKED, so a node never waits behind another node's claim
    of the same row: it skips it and takes the next one."""
    with store.session() as s:
        target: Any = run_id
        if store.is_postgresql:
            target = (
                select(Invocation.id).where(Invocation.id == run_id, Invocation.status == "queued")
                .with_for_update(skip_locked=True).scalar_subquery()
            )
        done = s.execute(
            update(Invocation)
            .where(Invocation.id == target, Invocation.status == "queued")
            .values(status="running", attempt=Invocation.attempt + 1, started_at=now(), run_after=None, node=node)
        )
        if not rowcount(done):
            return None
        row = s.execute(
            select(Invocation, User.name, User.timezone).join(User, User.id == Invocation.user_id).where(Invocation.id == run_id)
        ).one()
        inv, name, tz = row
        return QueuedRun(
            id=inv.id, user_id=inv.user_id, user_name=name, timezone=tz or "UTC", agent=inv.agent,
            function=inv.function, args=dict(inv.args or {}), caller=inv.caller, attempt=inv.attempt,
            max_attempts=inv.max_attempts, trigger=inv.trigger,
        )


def cancel(store: Store, user_id: int, run_id: str) -> dict[str, Any] | None:
    """Mark a queued or running background invocation cancelled; None when there is
    no such invocation of this user's. Answers {"status", "was"}."""
    with store.session() as s:
        row = s.execute(
            select(Invocation.status, Invocation.background).where(Invocation.id == run_id, Invocation.user_id == user_id)
        ).first()
        if row is None:
            return None
        status, background = row
        if status in TERMINAL:
            return {"status": status, "was": status, "background": background}
        if not background:
            return {"status": status, "was": status, "background": False}
        done = s.execute(
            update(Invocation)
            .where(Invocation.id == run_id, Invocation.status.in_(("queued", "running")))
            .values(status="cancelled", finished_at=now(), error_code="cancelled",
                    error_message="cancelled by the user", run_after=None)
        )
        if not rowcount(done):  # finished meanwhile
            return {"status": s.scalar(select(Invocation.status).where(Invocation.id == run_id)), "was": status, "background": True}
        return {"status": "cancelled", "was": status, "background": True}


def interrupted(store: Store, run: QueuedRun) -> str:
    """An attempt stopped by the kernel shutting down: the same policy as after a crash."""
    again = run.attempt < run.max_attempts
    at = now()
    with store.session() as s:
        s.execute(
            update(Invocation)
            .where(Invocation.id == run.id, Invocation.status == "running", Invocation.attempt == run.attempt)
            .values(
                status="queued" if again else "failed", error_code="interrupted", node=None,
                error_message=f"the kernel stopped during attempt {run.attempt}",
                finished_at=None if again else at, run_after=at + retry_delay(run.attempt) if again else None,
            )
        )
    return "queued" if again else "failed"


def status_of(store: Store, run_id: str) -> str | None:
    with store.session() as s:
        return s.scalar(select(Invocation.status).where(Invocation.id == run_id))


__all__ = ["TERMINAL", "recover", "due", "running_counts", "next_due_at", "claim", "cancel", "interrupted", "status_of"]
