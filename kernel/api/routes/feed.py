"""The user's feed: what their agents posted."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse
from dreamer.kernel.api.deps import KernelDep, PrincipalDep, credential_of
from dreamer.kernel.posts.feed import clear, latest_id, posts_after
from dreamer.kernel.posts.feed import feed as read_feed
from dreamer.kernel.users.revocation import until_revoked

router = APIRouter(prefix="/v1", tags=["feed"])

STREAM_QUIET_S = 25.0  # a comment line this often keeps proxies from closing a quiet stream
STREAM_BATCH = 50


@router.get("/feed")
def feed(k: KernelDep, who: PrincipalDep, limit: int = Query(50, ge=1, le=1000), agent: str | None = None) -> list[dict[str, Any]]:
    """The newest posts first: {"id", "agent", "text", "priority", "attachments", "invocation_id", "created_at"}."""
    return read_feed(k.store, who.user_id, limit, agent)


@router.delete("/feed")
def clear_feed(k: KernelDep, who: PrincipalDep, agent: str | None = None) -> dict[str, int]:
    """Delete the user's posts (only `agent`'s when given): {"deleted": n}."""
    return {"deleted": clear(k.store, who.user_id, agent)}


@router.get("/feed/stream")
async def feed_stream(
    request: Request, k: KernelDep, who: PrincipalDep, after: int | None = Query(None, ge=0),
    last_event_id: str | None = Header(None),
) -> StreamingResponse:
    """Server-sent events: each new post (`post`, its id as the event id) as it is written,
    oldest first. From the posts after `after` (or the Last-Event-ID a reconnecting browser
    sends); without either, from now on. Ends at once when the credential is revoked."""
    start = after
    if start is None and last_event_id is not None and last_event_id.isdigit():
        start = int(last_event_id)
    if start is None:
        start = latest_id(k.store, who.user_id)
    signal = k.invoker.feed

    async def events() -> AsyncIterator[bytes]:
        sent = start
        yield b": listening\n\n"  # headers and a first line at once: the browser knows it is open
        while True:
            listener = signal.listen(who.user_id)  # before reading: a post written meanwhile still wakes us
            try:
                fresh = posts_after(k.store, who.user_id, sent, STREAM_BATCH)
                for post in fresh:
                    sent = post["id"]
                    yield f"event: post\nid: {sent}\ndata: {json.dumps(post, ensure_ascii=False, default=str)}\n\n".encode()
                if len(fresh) < STREAM_BATCH:
                    try:
                        await asyncio.wait_for(listener.event.wait(), STREAM_QUIET_S)
                    except TimeoutError:
                        yield b": quiet\n\n"
            finally:
                signal.stop(listener)

    closing = b'event: error\ndata: {"code": "unauthorized", "message": "the credential this stream was opened with was revoked"}\n\n'
    stream = until_revoked(events(), k.revocations, k.store, credential_of(request), closing)
    return StreamingResponse(stream, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
