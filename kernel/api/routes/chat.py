"""Chat with Sidekick: POST /v1/chat streams server-sent events; conversations persist."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from dreamer.kernel.api.deps import KernelDep, PrincipalDep, credential_of
from dreamer.kernel.users.revocation import until_revoked
from dreamer.contracts.errors import DreamerError

router = APIRouter(prefix="/v1", tags=["sidekick"])


class ChatBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str = Field(max_length=100_000)
    conversation_id: str | None = Field(default=None, max_length=64)
    stream: bool = True


def _sse(event: dict[str, Any]) -> bytes:
    name = event.get("event", "message")
    body = {k: v for k, v in event.items() if k != "event"}
    return f"event: {name}\ndata: {json.dumps(body, ensure_ascii=False, default=str)}\n\n".encode()


@router.post("/chat", response_model=None)
async def chat(body: ChatBody, request: Request, k: KernelDep, who: PrincipalDep) -> Any:
    """One message to Sidekick. With `stream` (the default) the answer is an event stream:
    start, tool_call, tool_result, clarification | confirmation, text, done (or error).
    Without it, the `done` event's fields come back as one JSON object."""
    events = k.chat_service().turn(who, body.message, body.conversation_id)
    # The first event is taken before answering, so a bad message is a plain JSON error.
    first = await events.__anext__()
    if not body.stream:
        last = first
        async for event in events:
            last = event
        return {key: value for key, value in last.items() if key != "event"}

    async def stream() -> AsyncIterator[bytes]:
        yield _sse(first)
        try:
            async for event in events:
                yield _sse(event)
        except DreamerError as exc:
            yield _sse({"event": "error", "code": exc.code, "message": exc.message})

    closing = _sse({"event": "error", "code": "unauthorized", "message": "the credential this stream was opened with was revoked"})
    guarded = until_revoked(stream(), k.revocations, k.store, credential_of(request), closing)
    return StreamingResponse(guarded, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


@router.get("/conversations")
def conversations(
    k: KernelDep, who: PrincipalDep, limit: int = Query(50, ge=1, le=500), offset: int = Query(0, ge=0),
    q: str | None = Query(None, max_length=200),
) -> list[dict[str, Any]]:
    """The user's conversations, most recent first; `q` keeps those whose title or messages contain it."""
    return k.chat_service().conversations(who, limit, offset, q)


@router.get("/conversations/{conversation_id}")
def conversation(conversation_id: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    return k.chat_service().conversation(who, conversation_id)


@router.delete("/conversations/{conversation_id}")
def delete(conversation_id: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Delete one of your conversations with all its messages."""
    return k.chat_service().delete_conversation(who, conversation_id)
