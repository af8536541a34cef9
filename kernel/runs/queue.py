"""The durable queue of background invocations: rows of the `invocations` table.

The store is the queue, so a kernel that dies loses nothing: `queued` rows wait
for the next start, and `running` rows (their worker died with the kernel) are
put back or failed by their retry policy in `recover`. Every change of state is
one conditional UPDATE, so a claim, a cancel and a finish cannot overwrite each other.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import func, insert, or_, select, update

from dreamer.kernel.invocations.service import QueuedRun
from dreamer.kernel.runs.retry import retry_delay
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Invocation, InvocationLog, User

TERMINAL = ("succeeded", "failed", "cancelled")


def now() -> datetime:
    return datetime.now(timezone.utc)


def recover(store: Store) -> dict[str, int]:
    """At start: background invocations a dead kernel left running get another attempt
    when their policy allows one (at-least-once), else fail as interrupted."""
    counts = {"requeued": 0, "failed": 0}
    at = now()
    with store.session() as s:
        rows = s.execute(
            select(Invocation.id, Invocation.attempt, Invocation.max_attempts).where(
                Invocation.status == "running", Invocation.background.is_(True)
            )
        ).all()
        for run_id, attempt, max_attempts in rows:
            again = attempt < max_attempts
            s.execute(
                update(Invocation)
                .where(Invocation.id == run_id, Invocation.status == "running")
                .values(
                    status="queued" if again else "failed",
                    error_code="interrupted",
                    error_message=f"the kernel stopped during attempt {attempt}"
                    + ("; it will run again" if again else f", the last of {max_attempts} its retry policy allows"),
                    finished_at=None if again else at,
                    run_after=None,
                )
            )
            s.execute(
                insert(InvocationLog).values(
                    invocation_id=run_id, at=at, stream="kernel", level="warning",
                    message=f"the kernel stopped during attempt {attempt}; "
                    + ("queued again" if again else "no attempts left, so it failed"),
                )
            )
            counts["requeued" if again else "failed"] += 1
    return counts


def due(store: Store, limit: int = 100) -> list[tuple[str, int, str]]:
    """Queued invocations whose time has come, oldest first: (id, user_id, agent)."""
    at = now()
    with store.session() as s:
        return [
            (r.id, r.user_id, r.agent)
            for r in s.execute(
                select(Invocation.id, Invocation.user_id, Invocation.agent)
                .where(
                    Invocation.status == "queued",
                    or_(Invocation.run_after.is_(None), Invocation.run_after <= at),
                )
                .order_by(Invocation.created_at)
                .limit(limit)
            )
        ]


def next_due_at(store: Store) -> datetime | None:
    """When the earliest queued invocation waiting for a retry delay may run."""
    with store.session() as s:
        found = s.scalar(select(func.min(Invocation.run_after)).where(Invocation.status == "queued"))
    if found is not None and found.tzinfo is None:
        found = found.replace(tzinfo=timezone.utc)  # SQLite hands back naive times
    return found


def claim(store: Store, run_id: str) -> QueuedRun | None:
    """Take a queued invocation for one attempt: running, attempt + 1. None if someone
    (a cancel) got there first."""
    with store.session() as s:
        done = s.execute(
            update(Invocation)
            .where(Invocation.id == run_id, Invocation.status == "queued")
            .values(status="running", attempt=Invocation.attempt + 1, started_at=now(), run_after=None)
        )
        if not done.rowcount:
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
        if not done.rowcount:  # finished meanwhile
            return {"status": s.scalar(select(Invocation.status).where(Invocation.id == run_id)), "was": status, "background": True}
        return {"status": "cancelled", "was": status, "background": True}


def interrupted(store: Store, run: QueuedRun) -> str:
    """An attempt stopped by the kernel shutting down: the same policy as after a crash."""
    again = run.attempt < run.max_attempts
    at = now()
    with store.session() as s:
        s.execute(
            update(Invocation)
            .where(Invocation.id == run.id, Invocation.status == "running")
            .values(
                status="queued" if again else "failed", error_code="interrupted",
                error_message=f"the kernel stopped during attempt {run.attempt}",
                finished_at=None if again else at, run_after=at + retry_delay(run.attempt) if again else None,
            )
        )
    return "queued" if again else "failed"


def status_of(store: Store, run_id: str) -> str | None:
    with store.session() as s:
        return s.scalar(select(Invocation.status).where(Invocation.id == run_id))


__all__ = ["TERMINAL", "recover", "due", "next_due_at", "claim", "cancel", "interrupted", "status_of"]
