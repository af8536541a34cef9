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
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import Message, Receive, Scope, Send

from dreamer.kernel.api.deps import principal
from dreamer.kernel.api.schemas import CallBody, CallResult
from dreamer.kernel.invocations.principal import Caller

PATH = "/v1/agents/{agent}/functions/{function}"
_RESULT = TypeAdapter(CallResult)


# Set on a request this route hands back to the app's router, so that it does not match it again.
_HANDED_BACK = "dreamer.lean_call.handed_back"


class LeanCall:
    """The ASGI app of the route."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        body = await request.body()
        parsed = _parse(request.headers.get("content-type"), body)
        if parsed is None:
            await _fall_back(scope, body, receive, send)
            return
        # As FastAPI solves PrincipalDep: the first value of each header.
        who = await principal(request, request.headers.get("authorization"), request.headers.get("x-dreamer-user"))
        params = scope["path_params"]
        outcome = await request.app.state.kernel.invoker.invoke(
            who, params["agent"], params["function"], parsed.args, Caller("user", confirmed=parsed.confirm)
        )
        result = CallResult(result=outcome.value, invocation_id=outcome.invocation_id, status=outcome.status)
        # FastAPI's own fast path for a response model: pydantic's JSON bytes, by alias.
        await Response(_RESULT.dump_json(result, by_alias=True), media_type="application/json")(scope, receive, send)


async def _fall_back(scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
    """The app's router answers as if this route were not there (the FastAPI route does),
    reading the body this route already read."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    await scope["app"].router({**scope, _HANDED_BACK: True}, replay, send)


class LeanCallRoute(Route):
    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope.get(_HANDED_BACK):
            return Match.NONE, {}
        return super().matches(scope)


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
