from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from sqlalchemy import select

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.kernel.errors import DreamerError
from dreamer.kernel.store.models import Invocation, InvocationLog
from dreamer.kernel.tracing import spans_for

router = APIRouter(prefix="/v1", tags=["invocations"])


def _view(row: Invocation) -> dict[str, Any]:
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
        "created_at": row.created_at.isoformat() if row.created_at else None,
        "started_at": row.started_at.isoformat() if row.started_at else None,
        "finished_at": row.finished_at.isoformat() if row.finished_at else None,
        "duration_ms": duration,
        "trace_id": row.trace_id,
    }


@router.get("/invocations")
def invocations(
    k: KernelDep, who: PrincipalDep, agent: str | None = None, limit: int = Query(50, ge=1, le=1000)
) -> list[dict[str, Any]]:
    with k.store.session() as s:
        q = select(Invocation).where(Invocation.user_id == who.user_id)
        if agent:
            q = q.where(Invocation.agent == agent)
        return [_view(r) for r in s.scalars(q.order_by(Invocation.created_at.desc()).limit(limit))]


@router.get("/invocations/{invocation_id}")
def invocation(invocation_id: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    k.flush_traces()
    with k.store.session() as s:
        row = s.get(Invocation, invocation_id)
        if row is None or row.user_id != who.user_id:
            raise DreamerError("not_found", f"no invocation {invocation_id!r}")
        view = _view(row)
        logs = s.scalars(
            select(InvocationLog).where(InvocationLog.invocation_id == invocation_id).order_by(InvocationLog.id)
        )
        view["logs"] = [
            {"at": line.at.isoformat(), "stream": line.stream, "level": line.level, "message": line.message}
            for line in logs
        ]
        view["spans"] = spans_for(s, trace_id=row.trace_id) if row.trace_id else []
        return view
