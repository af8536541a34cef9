"""The `net.fetch` syscall: outbound HTTP for an agent, on the agent's grants.

For each request, and again for each redirect it follows, the kernel:
1. makes the URL canonical and checks the grant `net:<host>` (audited allow/deny)
   before anything touches the network, so an agent without the grant cannot even
   make the kernel look a name up (DNS queries can carry data out);
2. resolves the name itself and refuses when any address is not public
   (loopback, private, link-local, CGNAT, ...) unless a grant names the host
   exactly and the host is an address or a local-only name (policy.py);
3. connects to the checked addresses only (transport.py), with one time budget
   for the whole fetch and a cap on the response body;
4. writes the outcome (status, bytes, time, address; never headers or bodies)
   to the audit log.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ipaddress
import socket
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.net.policy import (
    CREDENTIAL_HEADERS,
    MAX_BODY_BYTES,
    METHODS,
    PUBLIC,
    IPAddress,
    Target,
    address_refusal,
    classify,
    clean_headers,
    invalid,
    is_textual,
    names_exactly,
    parse_url,
    redirect_target,
)
from dreamer.kernel.net.transport import Exchange, exchange

if TYPE_CHECKING:  # the syscall table imports this module
    from dreamer.kernel.invocations.syscalls import SyscallContext

MAX_REDIRECTS = 5
# Time kept back from the invocation's deadline, so agent code can still handle a
# fetch that timed out instead of being stopped with it.
DEADLINE_RESERVE_S = 0.25
DEFAULT_HEADERS = (("User-Agent", "dreamer"), ("Accept-Encoding", "identity"))


class _Base64Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    base64: str


class FetchParams(BaseModel):
    """net.fetch params as the worker sends them (see sdk/fetch.py)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    url: str
    method: str = "GET"
    headers: dict[str, str] | None = None
    body: str | _Base64Body | None = None
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_bytes: int | None = Field(default=None, gt=0)


@dataclass(frozen=True)
class FetchRequest:
    target: Target
    method: str
    headers: list[tuple[str, str]]
    body: bytes | None
    timeout: float
    max_bytes: int


def parse_request(params: dict[str, Any], *, max_timeout: float, max_bytes: int) -> FetchRequest:
    """Validated params with the installation's ceilings applied; invalid_argument otherwise."""
    try:
        p = FetchParams.model_validate(params)
    except ValidationError as exc:
        raise invalid(_first_error(exc)) from None
    method = p.method.upper()
    if method not in METHODS:
        raise invalid(f"method must be one of {', '.join(METHODS)}, not {p.method[:20]!r}")
    target = parse_url(p.url)
    headers = clean_headers(p.headers)
    present = {name.lower() for name, _ in headers}
    headers += [(name, value) for name, value in DEFAULT_HEADERS if name.lower() not in present]
    body: bytes | None = None
    if isinstance(p.body, str):
        try:
            body = p.body.encode("utf-8")
        except UnicodeEncodeError:
            raise invalid("body contains text that is not valid Unicode") from None
    elif p.body is not None:
        try:
            body = base64.b64decode(p.body.base64, validate=True)
        except (binascii.Error, ValueError):
            raise invalid("body.base64 is not valid base64") from None
    if body is not None and method in ("GET", "HEAD"):
        raise invalid(f"a {method} request cannot have a body")
    if body is not None and len(body) > MAX_BODY_BYTES:
        raise DreamerError("payload_too_large", f"the request body is larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB")
    return FetchRequest(
        target, method, headers, body,
        timeout=min(p.timeout or max_timeout, max_timeout),
        max_bytes=min(p.max_bytes or max_bytes, max_bytes),
    )


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    name = str(error["loc"][0]) if error["loc"] else "params"
    if name == "body":
        return 'net.fetch body must be a string or {"base64": "..."}'
    if name == "headers":
        return "net.fetch headers must map header names to string values"
    return f"net.fetch {name}: {error['msg'].lower()}"


def budget(timeout: float, deadline: float | None, now: float) -> float:
    """Seconds this fetch may take: its own timeout, cut to what the invocation has left."""
    if deadline is not None:
        timeout = min(timeout, deadline - now - DEADLINE_RESERVE_S)
    if timeout <= 0:
        raise DreamerError("timeout", "the invocation has no time left for a fetch")
    return timeout


@dataclass
class _Progress:
    """Where a fetch is, so a timeout can be audited against the hop it cut."""

    method: str
    target: Target
    hop_started: float = field(default_factory=time.monotonic)


async def net_fetch(ctx: SyscallContext, params: dict[str, Any]) -> dict[str, Any]:
    settings = ctx.invoker.settings
    request = parse_request(params, max_timeout=settings.fetch_timeout_s, max_bytes=settings.fetch_max_bytes)
    started = time.monotonic()
    limit = budget(request.timeout, ctx.caller.deadline, started)
    progress = _Progress(request.method, request.target)
    span = trace.get_current_span()
    span.set_attribute("http.request.method", request.method)
    span.set_attribute("server.address", request.target.host.name)
    try:
        async with asyncio.timeout(limit):
            result, final = await _follow(ctx, request, progress, limit)
    except TimeoutError:
        _outcome(ctx, progress, error="timeout")
        raise DreamerError("timeout", f"fetching {request.target.audit} did not finish within {limit:.3g} s") from None
    span.set_attribute("http.response.status_code", result.status)
    return _answer(result, final, started)


async def _follow(
    ctx: SyscallContext, request: FetchRequest, progress: _Progress, limit: float
) -> tuple[Exchange, Target]:
    method, target, headers, body = request.method, request.target, request.headers, request.body
    for hop in range(MAX_REDIRECTS + 1):
        progress.method, progress.target, progress.hop_started = method, target, time.monotonic()
        addresses = await _admit(ctx, method, target)
        try:
            result = await exchange(target, method, headers, body, addresses, max_bytes=request.max_bytes, timeout=limit)
        except DreamerError as exc:
            _outcome(ctx, progress, error=exc.code)
            raise
        _outcome(ctx, progress, result=result)
        if result.location is None:
            return result, target
        if hop == MAX_REDIRECTS:
            break
        following = redirect_target(target, result.location)
        method, body, headers = _redirected(result.status, method, body, headers, target, following)
        target = following
    raise DreamerError("fetch_failed", f"{request.target.audit} redirected more than {MAX_REDIRECTS} times")


async def _admit(ctx: SyscallContext, method: str, target: Target) -> list[IPAddress]:
    """The grant check, then the addresses this hop may connect to."""
    audited = f"{method} {target.audit}"
    ctx.require(target.host.scope, action="net.fetch", target=audited)
    addresses = [target.host.ip] if target.host.ip is not None else await _resolve(target)
    if all(classify(ip) == PUBLIC for ip in addresses):
        return addresses
    named = names_exactly(ctx.invoker.cache.grants(ctx.who.user_id, ctx.agent), target.host)
    reason = address_refusal(target.host, addresses, named)
    if reason is None:
        return addresses
    ctx.record(action="net.fetch", target=audited, decision="deny", detail={"reason": reason})
    raise DreamerError("permission_denied", f"{ctx.agent} may not fetch {target.audit}: {reason}")


async def _resolve(target: Target) -> list[IPAddress]:
    name = target.host.name
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            name, target.port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except (socket.gaierror, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, socket.gaierror) else "the name cannot be looked up"
        raise DreamerError("fetch_failed", f"could not resolve {name}: {reason}") from None
    addresses: list[IPAddress] = []
    for *_, sockaddr in infos:
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise DreamerError("fetch_failed", f"could not resolve {name}: it has no address")
    return addresses


def _redirected(
    status: int, method: str, body: bytes | None, headers: list[tuple[str, str]], old: Target, new: Target
) -> tuple[str, bytes | None, list[tuple[str, str]]]:
    """The next request after a redirect, as browsers make it: 303 (and 301/302
    after a POST) become a GET without a body; credentials stay with their origin."""
    if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
        method, body = "GET", None
        headers = [(k, v) for k, v in headers if not k.lower().startswith("content-")]
    if new.origin != old.origin:
        headers = [(k, v) for k, v in headers if k.lower() not in CREDENTIAL_HEADERS]
    return method, body, headers


def _outcome(ctx: SyscallContext, progress: _Progress, *, result: Exchange | None = None, error: str | None = None) -> None:
    detail: dict[str, Any] = {"elapsed_ms": round((time.monotonic() - progress.hop_started) * 1000)}
    if result is not None:
        detail |= {"status": result.status, "bytes": len(result.body), "address": result.address}
        if result.location is not None:
            detail["redirect"] = True
    if error is not None:
        detail["error"] = error
    ctx.record(action="net.response", target=f"{progress.method} {progress.target.audit}", detail=detail)


def _answer(result: Exchange, final: Target, started: float) -> dict[str, Any]:
    headers: dict[str, str] = {}
    for name, value in result.headers:
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    body: str | dict[str, str] = {"base64": base64.b64encode(result.body).decode("ascii")}
    if is_textual(headers.get("content-type")):
        try:
            body = result.body.decode("utf-8")
        except UnicodeDecodeError:
            pass  # text in another charset, or mislabelled: the bytes are sent as they are
    return {
        "status": result.status,
        "headers": headers,
        "body": body,
        "url": final.url,
        "elapsed_ms": round((time.monotonic() - started) * 1000),
    }
