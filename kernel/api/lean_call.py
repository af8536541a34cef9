"""POST /v1/agents/{agent}/functions/{function} as a plain Starlette route.

The call is the kernel's hottest request. Through FastAPI each one pays for dependency
solving (the kernel, the principal's two headers, the body model), for matching the path
against every route registered before it, and for validating the response it built
itself. Here it is read, checked and answered directly, by the same functions: the
principal comes from `deps.principal`, the body is validated by `CallBody`, and the answer
is serialized by the same pydantic serializer FastAPI uses, so the bytes are the same.

Anything but a well-formed JSON body (a wrong content type, invalid JSON, a field the
model refuses) is handed back to the app's router, where the FastAPI route, still
registered (for OpenAPI and for exactly those answers), says what is wrong in its own words.

On a single kernel the call does not go through the middleware stack either: `CallFirst`
is the stack's first layer and does for a call what the layers would (tests/web/test_call_first.py
sends each kind of request through both and compares the answers).
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from pydantic import TypeAdapter, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dreamer.kernel.api.deps import principal
from dreamer.kernel.api.limits import BodyTooLarge, declared_too_large, refuse
from dreamer.kernel.api.schemas import CallBody, CallResult
from dreamer.kernel.invocations.principal import Caller

PATH = "/v1/agents/{agent}/functions/{function}"
_RESULT = TypeAdapter(CallResult)
_JSON = b"application/json"


# Set on a request this route hands back to the app's router, so that it does not match it again.
_HANDED_BACK = "dreamer.lean_call.handed_back"


class LeanCall:
    """The ASGI app of the route (what the app's router runs when CallFirst is not in front:
    a cluster node, whose placement layer must see every call first)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await Request(scope, receive).body()
        answer = await _answer(scope, receive, body)
        if answer is None:
            await _fall_back(scope["app"].router, scope, body, receive, send)
            return
        await _send_json(send, answer)


async def _answer(scope: Scope, receive: Receive, body: bytes) -> bytes | None:
    """The call's answer (JSON bytes), or None when the body is not plainly valid."""
    request = Request(scope, receive)
    parsed = _parse(request.headers.get("content-type"), body)
    if parsed is None:
        return None
    # As FastAPI solves PrincipalDep: the first value of each header.
    who = await principal(request, request.headers.get("authorization"), request.headers.get("x-dreamer-user"))
    params = scope["path_params"]
    outcome = await request.app.state.kernel.invoker.invoke(
        who, params["agent"], params["function"], parsed.args, Caller("user", confirmed=parsed.confirm)
    )
    result = CallResult(result=outcome.value, invocation_id=outcome.invocation_id, status=outcome.status)
    # FastAPI's own fast path for a response model: pydantic's JSON bytes, by alias.
    return _RESULT.dump_json(result, by_alias=True)


async def _send_json(send: Send, body: bytes) -> None:
    """What `Response(body, media_type="application/json")` sends, header for header."""
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(body)).encode("latin-1")), (b"content-type", _JSON)]})
    await send({"type": "http.response.body", "body": body})


async def _fall_back(app: ASGIApp, scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
    """`app` answers as if this route were not there (the FastAPI route does), reading the
    body this route already read."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    await app({**scope, _HANDED_BACK: True}, replay, send)


class LeanCallRoute(Route):
    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope.get(_HANDED_BACK):
            return Match.NONE, {}
        return super().matches(scope)


class CallFirst:
    """The app's middleware stack with the call in front of it, in one layer.

    For a call, the six layers of the stack and the router are a dozen awaits that do
    nothing: no OpenTelemetry provider is set, FastAPI's own body limit is off, there is no
    file to close, and the lean route is the router's first. What they do do for a call is
    here, in the same order and words: BodyLimit's two checks (kernel/api/limits.py), the
    app's exception handlers for what the call raises (as ExceptionMiddleware looks them up),
    and the 500 handler for anything else, re-raised after its answer for the server to log
    (as ServerErrorMiddleware). Everything else, a call that is not plainly valid included,
    goes through the whole stack (`app`).
    """

    def __init__(self, app: ASGIApp, exception_handlers: dict[Any, Any], *, json_bytes: int) -> None:
        self.app = app  # named so: FastAPI walks a stack through `.app`
        self.limit = json_bytes
        self.path = LeanCallRoute(PATH, LeanCall()).path_regex
        # Split as FastAPI's build_middleware_stack splits them.
        self.error_handler: Any = None
        self.status_handlers: dict[int, Any] = {}
        self.handlers: dict[Any, Any] = {HTTPException: _plain_http_exception}
        for key, value in exception_handlers.items():
            if key in (500, Exception):
                self.error_handler = value
            elif isinstance(key, int):
                self.status_handlers[key] = value
            else:
                self.handlers[key] = value

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or scope["method"] != "POST" or scope.get("root_path")
                # FastAPI's own telemetry, when a provider is set, follows the whole stack.
                or scope.get("fastapi.telemetry") is not None):
            await self.app(scope, receive, send)
            return
        found = self.path.match(scope["path"])
        if found is None:
            await self.app(scope, receive, send)
            return
        if declared_too_large(scope, self.limit):
            await refuse(send, self.limit)
            return
        scope["path_params"] = found.groupdict()
        try:
            body = await _read(receive, self.limit)
            answer = await _answer(scope, receive, body)
        except Exception as exc:  # noqa: BLE001 - answered as the stack answers it
            await self._failed(scope, receive, send, exc)
            return
        if answer is None:
            await _fall_back(self.app, scope, body, receive, send)
            return
        await _send_json(send, answer)

    async def _failed(self, scope: Scope, receive: Receive, send: Send, exc: Exception) -> None:
        handler = self.status_handlers.get(exc.status_code) if isinstance(exc, HTTPException) else None
        handler = handler or next((self.handlers[c] for c in type(exc).__mro__ if c in self.handlers), None)
        if handler is not None:
            response = await _run(handler, Request(scope, receive, send), exc)
            if response is not None:
                await response(scope, receive, send)
            # Reused exception instances accumulate tracebacks across requests (as Starlette says).
            exc.__traceback__ = None
            return
        request = Request(scope)
        if self.error_handler is None:
            response = PlainTextResponse("Internal Server Error", status_code=500)
        else:
            response = await _run(self.error_handler, request, exc)
        await response(scope, receive, send)
        raise exc


async def _run(handler: Any, request: Request, exc: Exception) -> Any:
    if inspect.iscoroutinefunction(handler):
        return await handler(request, exc)
    return await run_in_threadpool(handler, request, exc)


async def _plain_http_exception(request: Request, exc: Exception) -> Response:
    """Starlette's default for an HTTPException, for an app that registered none."""
    assert isinstance(exc, HTTPException)
    if exc.status_code in {204, 304}:
        return Response(status_code=exc.status_code, headers=exc.headers)
    return PlainTextResponse(exc.detail, status_code=exc.status_code, headers=exc.headers)


async def _read(receive: Receive, limit: int) -> bytes:
    """The whole body, as Request.body() reads it, counted as BodyLimit counts it."""
    chunks: list[bytes] = []
    seen = 0
    while True:
        message = await receive()
        if message["type"] == "http.request":
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > limit:
                raise BodyTooLarge(limit)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
        elif message["type"] == "http.disconnect":
            raise ClientDisconnect()


def _parse(content_type: str | None, body: bytes) -> CallBody | None:
    """The body as FastAPI would read it (JSON when the content type is absent or JSON, then
    the model in Python mode), or None for anything that is not plainly valid."""
    if content_type is not None and content_type.split(";", 1)[0].strip().lower() != "application/json":
        return None
    if not body:
        return None
    try:
        data: Any = json.loads(body)
        return CallBody.model_validate(data)
    except (ValueError, ValidationError, RecursionError):
        return None  # FastAPI's route says what is wrong, in its own words


def lean_call_route() -> Route:
    """The plain route for the call; it goes before every other route of the app."""
    return LeanCallRoute(PATH, LeanCall(), methods=["POST"])
