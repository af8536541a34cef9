from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from dreamer.kernel.api.deps import KernelDep, PrincipalDep, credential_of
from dreamer.kernel.users.revocation import until_revoked
from dreamer.kernel.invocations import reads
from dreamer.kernel.runs.queue import TERMINAL

router = APIRouter(prefix="/v1", tags=["invocations"])

FOLLOW_POLL_S = 0.25
FOLLOW_MAX_S = 24 * 3600.0


@router.get("/invocations")
def invocations(
    k: KernelDep, who: PrincipalDep, agent: str | None = None, limit: int = Query(50, ge=1, le=1000),
    status: str | None = None, offset: int = Query(0, ge=0),
) -> list[dict[str, Any]]:
    """The user's invocations, newest first; `offset` pages back through them. Each names the
    run it belongs to (`root_id`: the outermost run of its call chain, itself when nothing
    called it) and, when Sidekick made that run in a chat, the `conversation` ({"id", "title"})."""
    return reads.list_invocations(k.store, who, k.chat, agent, limit, status, offset)


@router.get("/invocations/{invocation_id}")
def invocation(invocation_id: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    return reads.invocation(k.store, who, invocation_id, k.flush_traces)


@router.post("/invocations/{invocation_id}/cancel")
async def cancel(invocation_id: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Cancel a queued or running background invocation (a running one's worker is stopped)."""
    return await k.runner.cancel(who.user_id, invocation_id)


@router.get("/invocations/{invocation_id}/logs")
async def log_stream(invocation_id: str, request: Request, k: KernelDep, who: PrincipalDep) -> StreamingResponse:
    """Server-sent events: every log line of the invocation as it is written (`log`), across
    attempts, then `end` with the final status. Lines of a running attempt come from the
    kernel's memory; those of finished attempts from the store."""
    reads.check_own(k.store, who, invocation_id)

    async def events() -> AsyncIterator[bytes]:
        stored = 0  # lines already sent from the store
        live_sent = 0  # lines already sent from the running attempt
        live_run = None
        waited = 0.0
        while waited < FOLLOW_MAX_S:
            found = reads.stored_lines(k.store, invocation_id, stored)
            status, lines, view = found.status, found.lines, found.view
            run = k.invoker.live.get(invocation_id)
            if live_run is not None and run is not live_run:
                # The attempt we followed ended: its lines are in the store now; skip those we sent.
                skip = min(live_sent, len(lines))
                stored += skip
                lines = lines[skip:]
                live_sent = 0
            for line in lines:
                stored += 1
                yield _sse("log", line)
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
