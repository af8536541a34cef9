"""On a cluster node, send each user's API request to the node that holds the user's lease.

Installed only on a node (`dreamer up --node`); a single kernel never has it. For a request
with a credential (a Bearer token or a web session; an administrator's `X-Dreamer-User`
names the user acted for), the node either serves it here under the user's lease, forwards
it to the owner (kernel/cluster/forward.py), or answers 503 with `Retry-After` when the
owner is gone and its lease has not run out yet. Requests without a credential (webhooks,
sign-in) and the cluster's own routes are served where they land: what they start
for a user (a queued run) runs on the user's node through the background runner.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

import httpx
from sqlalchemy import select
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.cluster import forward
from dreamer.kernel.cluster.placement import Elsewhere, Here, Unavailable

if TYPE_CHECKING:
    from dreamer.kernel.cluster.runtime import ClusterRuntime
    from dreamer.kernel.core import Kernel

log = logging.getLogger("dreamer.cluster.placement")

SESSION_COOKIE = "dreamer_session"
# Served where they land: the health check (the load balancer's view of this node), the
# cluster's own routes (drain a node whatever its users), sign-in and static files. Every
# other request with a credential is placed — the web pages too, since some open the
# user's agent files (an agent's data page reads its SQLite file).
NOT_PLACED = ("/healthz", "/v1/nodes", "/static/", "/login", "/logout", "/hooks/")


def _placed_path(path: str) -> bool:
    return not path.startswith(NOT_PLACED)


def who_is(k: "Kernel", headers: Headers, cookies: dict[str, str]) -> tuple[int, str] | None:
    """The user a request acts for, or None to let the route answer (no or a bad credential)."""
    from dreamer.kernel.store.models import User
    from dreamer.kernel.users.accounts import bearer_user
    from dreamer.kernel.users.sessions import find_session

    authorization = headers.get("authorization")
    acting: tuple[int, str, bool] | None = None
    try:
        if authorization and authorization.partition(" ")[0].lower() == "bearer":
            user = bearer_user(k.tokens, k.store, authorization)
            acting = (user.id, user.name, user.is_admin)
        elif cookies.get(SESSION_COOKIE):
            with k.store.session() as s:
                signed_in = find_session(s, cookies[SESSION_COOKIE])
            if signed_in is not None:
                acting = (signed_in.user_id, signed_in.user_name, signed_in.is_admin)
    except DreamerError:
        return None
    if acting is None:
        return None
    other = headers.get("x-dreamer-user")
    if other and other != acting[1]:
        if not acting[2]:
            return None  # the route refuses it
        with k.store.session() as s:
            found = s.scalar(select(User.id).where(User.name == other))
        return (int(found), other) if found is not None else None
    return acting[0], acting[1]


def _cookies(headers: Headers) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name:
            out[name] = value
    return out


class PlaceUsers:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _placed_path(scope["path"]):
            await self.app(scope, receive, send)
            return
        kernel: Kernel | None = getattr(scope["app"].state, "kernel", None)
        cluster = kernel.cluster if kernel is not None else None
        if kernel is None or cluster is None:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        user = who_is(kernel, headers, _cookies(headers))
        if forward.H_SIG in headers:
            await self._forwarded(cluster, user, scope, receive, send, headers)
            return
        if user is None:
            await self.app(scope, receive, send)
            return
        user_id, name = user
        placed = await cluster.placement.place(user_id, name, take=not cluster.draining)
        if isinstance(placed, Here):
            await self._serve_here(cluster, user_id, scope, receive, send)
        elif isinstance(placed, Elsewhere):
            await self._forward(cluster, user_id, name, placed, scope, receive, send)
        else:
            await _refuse(send, DreamerError("node_unavailable", placed.reason), placed.retry_after_s)

    async def _serve_here(self, cluster: "ClusterRuntime", user_id: int, scope: Scope, receive: Receive,
                          send: Send) -> None:
        placement = cluster.placement
        placement.in_flight[user_id] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            placement.in_flight[user_id] -= 1

    async def _forwarded(self, cluster: "ClusterRuntime", user: tuple[int, str] | None, scope: Scope,
                         receive: Receive, send: Send, headers: Headers) -> None:
        """A request another node sent here because it found this node holding the user."""
        signed = forward.verify(cluster.forward_key, scope["method"], _target(scope), headers)
        if isinstance(signed, str):
            await _refuse(send, DreamerError("forbidden", signed))
            return
        # The connection is the forwarding node's, not the client's: it must never pass for a
        # local client (the web app signs a lone password-less user in from loopback peers).
        scope = dict(scope, client=(f"node:{signed.origin}"[:80], 0))
        if user is None:  # the credential is not (or no longer) valid: the route says so
            await self.app(scope, receive, send)
            return
        user_id, name = user
        if user_id != signed.user_id:
            await _refuse(send, DreamerError("forbidden", "a forwarded request's credential is not the placed user's"))
            return
        # Taking here only renews a lease this node holds (same token); one it would take afresh
        # gets a new token, so the request, routed on the old one, is still refused.
        placed = await cluster.placement.place(user_id, name, take=not cluster.draining)
        if isinstance(placed, Unavailable):  # this node is handing the user over: ask again shortly
            await _refuse(send, DreamerError("node_unavailable", placed.reason), placed.retry_after_s)
            return
        if not isinstance(placed, Here) or placed.fence != signed.fence:
            mine = placed.fence if isinstance(placed, Here) else None
            await _refuse(send, DreamerError(
                "stale_lease",
                f"node {signed.origin} forwarded user {name}'s request with lease fence {signed.fence}, but node "
                f"{cluster.me.name} holds " + (f"fence {mine}" if mine is not None else "no lease on them")
                + "; ask again",
            ), 1.0)
            return
        await self._serve_here(cluster, user_id, scope, receive, send)

    async def _forward(self, cluster: "ClusterRuntime", user_id: int, name: str, owner: Elsewhere, scope: Scope,
                       receive: Receive, send: Send) -> None:
        target = _target(scope)
        signed = forward.sign(cluster.forward_key, scope["method"], target, user_id, owner.fence, cluster.me.name)
        outgoing = forward.outgoing_headers(list(scope["headers"])) + list(signed.items())
        client = cluster.forward_client()
        request = client.build_request(scope["method"], owner.advertise + target, headers=outgoing,
                                       content=forward.body_chunks(receive))
        try:
            answer = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            log.warning("node %s could not forward user %s's request to %s: %s", cluster.me.name, name, owner.node, exc)
            await _refuse(send, DreamerError(
                "node_unavailable",
                f"user {name}'s node {owner.node} did not answer ({type(exc).__name__}); another node takes them "
                f"over once its lease runs out, ask again shortly",
            ), cluster.me.lease_s)
            return
        try:
            await send({"type": "http.response.start", "status": answer.status_code,
                        "headers": forward.answer_headers(list(answer.headers.raw))})
            async for chunk in answer.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except (httpx.HTTPError, OSError, asyncio.CancelledError) as exc:
            # The owner died half-way: the answer is cut; the client sees a broken response.
            log.warning("user %s's answer from %s was cut: %s", name, owner.node, exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            await answer.aclose()


def _target(scope: Scope) -> str:
    query = scope.get("query_string", b"")
    path = scope.get("raw_path") or scope["path"].encode()
    if isinstance(path, bytes):
        path = path.decode("latin-1")
    return str(path) + (("?" + query.decode("latin-1")) if query else "")


async def _refuse(send: Send, error: DreamerError, retry_after_s: float | None = None) -> None:
    body = json.dumps(error.to_dict()).encode()
    headers: list[tuple[bytes, bytes]] = [(b"content-type", b"application/json"),
                                          (b"content-length", str(len(body)).encode())]
    if retry_after_s is not None:
        headers.append((b"retry-after", str(max(1, round(retry_after_s))).encode()))
    message: dict[str, Any] = {"type": "http.response.start", "status": error.status, "headers": headers}
    await send(message)
    await send({"type": "http.response.body", "body": body, "more_body": False})


__all__ = ["PlaceUsers", "who_is"]
