from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from sqlalchemy import select

from dreamer.kernel.api.deps import KernelDep, PrincipalDep, credential_of
from dreamer.kernel.users.revocation import until_revoked
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.rewards import rewards_of
from dreamer.kernel.runs.queue import TERMINAL
from dreamer.kernel.store.models import Invocation, InvocationLog
from dreamer.kernel.tracing import spans_for

router = APIRouter(prefix="/v1", tags=["invocations"])

FOLLOW_POLL_S = 0.25
FOLLOW_MAX_S = 24 * 3600.0


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


def _line(line: InvocationLog) -> dict[str, Any]:
    return {"at": line.at.isoformat(), "stream": line.stream, "level": line.level, "message": line.message}


def _own(s: Any, who: Any, invocation_id: str) -> Invocation:
    row = s.get(Invocation, invocation_id)
    if row is None or row.user_id != who.user_id:
        raise DreamerError("not_found", f"no invocation {invocation_id!r}")
    return row


@router.get("/invocations")
def invocations(
    k: KernelDep, who: PrincipalDep, agent: str | None = None, limit: int = Query(50, ge=1, le=1000),
    status: str | None = None, offset: int = Query(0, ge=0),
) -> list[dict[str, Any]]:
    """The user's invocations, newest first; `offset` pages back through them."""
    with k.store.session() as s:
        q = select(Invocation).where(Invocation.user_id == who.user_id)
        if agent:
            q = q.where(Invocation.agent == agent)
        if status:
            q = q.where(Invocation.status == status)
        return [_view(r) for r in s.scalars(q.order_by(Invocation.created_at.desc(), Invocation.id).offset(offset).limit(limit))]


@router.get("/invocations/{invocation_id}")
def invocation(invocation_id: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    k.flush_traces()
    with k.store.session() as s:
        row = _own(s, who, invocation_id)
        view = _view(row)
        logs = s.scalars(
            select(InvocationLog).where(InvocationLog.invocation_id == invocation_id).order_by(InvocationLog.id)
        )
        view["logs"] = [_line(line) for line in logs]
        view["spans"] = spans_for(s, trace_id=row.trace_id) if row.trace_id else []
        view["rewards"] = rewards_of(s, invocation_id)
        return view


@router.post("/invocations/{invocation_id}/cancel")
async def cancel(invocation_id: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Cancel a queued or running background invocation (a running one's worker is stopped)."""
    return await k.runner.cancel(who.user_id, invocation_id)


@router.get("/invocations/{invocation_id}/logs")
async def log_stream(invocation_id: str, request: Request, k: KernelDep, who: PrincipalDep) -> StreamingResponse:
    """Server-sent events: every log line of the invocation as it is written (`log`), across
    attempts, then `end` with the final status. Lines of a running attempt come from the
    kernel's memory; those of finished attempts from the store."""
    with k.store.session() as s:
        _own(s, who, invocation_id)

    async def events() -> AsyncIterator[bytes]:
        stored = 0  # lines already sent from the store
        live_sent = 0  # lines already sent from the running attempt
        live_run = None
        waited = 0.0
        while waited < FOLLOW_MAX_S:
            with k.store.session() as s:
                row = s.get(Invocation, invocation_id)
                status = row.status if row else "failed"
                lines = list(
                    s.scalars(
                        select(InvocationLog).where(InvocationLog.invocation_id == invocation_id)
                        .order_by(InvocationLog.id).offset(stored)
                    )
                )
                view = _view(row) if row else None
            run = k.invoker.live.get(invocation_id)
            if live_run is not None and run is not live_run:
                # The attempt we followed ended: its lines are in the store now; skip those we sent.
                skip = min(live_sent, len(lines))
                stored += skip
                lines = lines[skip:]
                live_sent = 0
            for line in lines:
                stored += 1
                yield _sse("log", _line(line))
            live_run = run
            if run is not None:
                for at, stream, level, message in list(run.logs[live_sent:]):
                    live_sent += 1
                    yield _sse("log", {"at": at.isoformat(), "stream": stream, "level": level, "message": message})
            elif status in TERMINAL:
                yield _sse("end", view or {"id": invocation_id, "status": status})
                return
            await asyncio.sleep(FOLLOW_POLL_S)
            waited += FOLLOW_POLL_S

    # Ends at once when the credential that opened it is revoked (kernel/users/revocation.py).
    closing = _sse("error", {"code": "unauthorized", "message": "the credential this stream was opened with was revoked"})
    stream = until_revoked(events(), k.revocations, k.store, credential_of(request), closing)
    return StreamingResponse(stream, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n".encode()
