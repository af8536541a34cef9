"""A ceiling on every request body, enforced before the body is parsed.

Bundle uploads may be as large as the installation allows; everything else is
JSON and never needs more than a worker message may carry.
"""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

UPLOAD_PATHS = ("/v1/bundles", "/v1/build")


class BodyTooLarge(HTTPException):
    """Raised while the app reads the body. An HTTPException, because FastAPI turns any
    other error during body parsing into a vague 400; this one reaches the handler as 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, _message(limit))


class BodyLimit:
    def __init__(self, app: ASGIApp, *, json_bytes: int, upload_bytes: int) -> None:
        self.app = app
        self.json_bytes = json_bytes
        self.upload_bytes = upload_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.upload_bytes if scope["path"] in UPLOAD_PATHS else self.json_bytes
        if declared_too_large(scope, limit):
            await refuse(send, limit)
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except BodyTooLarge:
            if not started:
                await refuse(send, limit)


def declared_too_large(scope: Scope, limit: int) -> bool:
    """The request says its body is larger than `limit` (its last Content-Length)."""
    declared = dict(scope.get("headers") or []).get(b"content-length", b"")
    return declared.isdigit() and int(declared) > limit


def _message(limit: int) -> str:
    return f"the request body is larger than {limit // 1024} KiB"


async def refuse(send: Send, limit: int) -> None:
    body = json.dumps({"error": {"code": "payload_too_large", "message": _message(limit)}}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
