"""What a user reads of their invocations: the list, one run with its logs, spans and
rewards, and the log lines a follower has not seen yet. Every read is of the user's own rows;
another user's invocation is not found."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.lineage import roots_of
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.invocations.rewards import rewards_of
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Invocation, InvocationLog
from dreamer.kernel.tracing import spans_for

if TYPE_CHECKING:
    from dreamer.kernel.ports import ChatService


def view(row: Invocation) -> dict[str, Any]:
    """One invocation as the API shows it (GET /v1/invocations)."""
    duration = None
    if row.started_at and row.finished_at:
        duration = round((row.finished_at - row.started_at).total_seconds() * 1000, 1)
    return {
        "id": row.id,
        "agent": row.agent,
        "function": row.function,
        "caller": row.caller,
        "parent_id": row.parent_id,
        "status": row.status,
        "args": row.args,
        "result": row.result,
        "error": {"code": row.error_code, "message": row.error_message} if row.error_code else None,
        "attempt": row.attempt,
        "max_attempts": row.max_attempts,
        "background": row.background,
        "trigger": row.trigger,
        "created_at": row.created_at.isoformat() if row.created_at else None,
        "started_at": row.started_at.isoformat() if row.started_at else None,
        "finished_at": row.finished_at.isoformat() if row.finished_at else None,
        "run_after": row.run_after.isoformat() if row.run_after else None,
        "duration_ms": duration,
        "trace_id": row.trace_id,
    }


def line_view(line: InvocationLog) -> dict[str, Any]:
    return {"at": line.at.isoformat(), "stream": line.stream, "level": line.level, "message": line.message}


def _own(s: Session, who: Principal, invocation_id: str) -> Invocation:
    row = s.get(Invocation, invocation_id)
    if row is None or row.user_id != who.user_id:
        raise DreamerError("not_found", f"no invocation {invocation_id!r}")
    return row


def check_own(store: Store, who: Principal, invocation_id: str) -> None:
    """Raise not_found unless the invocation is the user's."""
    with store.session() as s:
        _own(s, who, invocation_id)


def list_invocations(
    store: Store, who: Principal, chat: ChatService | None, agent: str | None = None, limit: int = 50,
    status: str | None = None, offset: int = 0,
) -> list[dict[str, Any]]:
    """The user's invocations, newest first, each with its `root_id` and `conversation`
    (GET /v1/invocations says what they are)."""
    with store.session() as s:
        q = select(Invocation).where(Invocation.user_id == who.user_id)
        if agent:
            q = q.where(Invocation.agent == agent)
        if status:
            q = q.where(Invocation.status == status)
        rows = list(s.scalars(q.order_by(Invocation.created_at.desc(), Invocation.id).offset(offset).limit(limit)))
        roots = roots_of(s, who.user_id, rows)
    chats = {r.id: r.created_at for r in roots.values() if r.caller == "sidekick"}
    conversations = chat.conversations_of(who, chats) if chat is not None and chats else {}
    return [view(r) | {"root_id": roots[r.id].id, "conversation": conversations.get(roots[r.id].id)} for r in rows]


def invocation(store: Store, who: Principal, invocation_id: str, flush_traces: Callable[[], None]) -> dict[str, Any]:
    """One of the user's invocations with its logs, its spans (finished spans are flushed
    into the store first) and its rewards."""
    flush_traces()
    with store.session() as s:
        row = _own(s, who, invocation_id)
        shown = view(row)
        logs = s.scalars(
            select(InvocationLog).where(InvocationLog.invocation_id == invocation_id).order_by(InvocationLog.id)
        )
        shown["logs"] = [line_view(line) for line in logs]
        shown["spans"] = spans_for(s, trace_id=row.trace_id) if row.trace_id else []
        shown["rewards"] = rewards_of(s, invocation_id)
        return shown


@dataclass(frozen=True)
class StoredLines:
    """What a follower of an invocation's logs reads from the store on each look."""

    status: str  # "failed" when the row is gone
    lines: list[dict[str, Any]]  # the stored lines after those already read
    view: dict[str, Any] | None  # the invocation, None when the row is gone


def stored_lines(store: Store, invocation_id: str, after: int) -> StoredLines:
    """The invocation's stored log lines after the first `after`, its status and its view."""
    with store.session() as s:
        row = s.get(Invocation, invocation_id)
        lines = list(
            s.scalars(
                select(InvocationLog).where(InvocationLog.invocation_id == invocation_id)
                .order_by(InvocationLog.id).offset(after)
            )
        )
        return StoredLines(
            status=row.status if row else "failed",
            lines=[line_view(line) for line in lines],
            view=view(row) if row else None,
        )
