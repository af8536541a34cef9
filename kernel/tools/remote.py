"""A remote (streamable-HTTP) tool server: where the kernel may connect, and how much it reads.

- Nothing connects before the user approved the install: the review lists a remote
  server's tools on first use, so a bundle uploaded for review cannot make the kernel
  send anything anywhere, nor reflect a service's error text (kernel/tools/install.py).
- The URL and its resolved addresses pass the same policy as ctx.fetch
  (kernel/net/policy.py): public addresses for everyone; a loopback or private one only
  for a server the administrator installed (and, as for ctx.fetch, only when the URL
  names the address or a local name such as `localhost` / `*.internal`); never the
  addresses no grant reaches. The connection is pinned to the checked addresses, so a
  name that resolves elsewhere a moment later (DNS rebinding) changes nothing.
- Every answer is capped like a stdio server's messages (Limits.max_message_bytes):
  a Content-Length above the cap is refused before its body is read, a chunked or
  streamed body is counted as it arrives (per event for an SSE stream), and the
  session ends with one sentence. Answers are asked for uncompressed, and a compressed
  one is refused, so the cap counts what is decoded.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import typing
from collections.abc import AsyncIterator

import httpcore2
import httpx2

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.net.policy import (
    PUBLIC,
    IPAddress,
    Target,
    address_refusal,
    classify,
    clean_headers,
    parse_url,
)

if typing.TYPE_CHECKING:
    from dreamer.kernel.tools.transport import Fault

SSE_TAIL = 3  # bytes kept from the previous chunk to find an event boundary split in two


def remote_target(server: str, url: object) -> Target:
    """The parsed URL of a remote tool server, or one sentence why it is not one."""
    if not isinstance(url, str):
        raise DreamerError("invalid_bundle", f"{server}: server.url must be a string")
    try:
        return parse_url(url)
    except DreamerError as exc:
        raise DreamerError("invalid_bundle", f"{server}: server.url: {exc.message}") from None


def checked_headers(server: str, headers: dict[str, str]) -> dict[str, str]:
    """Headers a user sets for a server, checked as ctx.fetch checks an agent's: no
    control characters, no hop-by-hop or kernel-set ones (Host, Content-Length, ...)."""
    cleaned = clean_headers(headers)
    dropped = sorted({k for k in headers} - {k for k, _ in cleaned})
    if dropped:
        raise DreamerError(
            "invalid_argument", f"{server}: the header {dropped[0]} is set by the kernel itself and cannot be set for a server"
        )
    return dict(cleaned)


async def admitted_addresses(server: str, target: Target, *, private_allowed: bool) -> list[IPAddress]:
    """The addresses the kernel may connect to for this server, or permission_denied."""
    host = target.host
    if host.ip is not None:
        addresses: list[IPAddress] = [host.ip]
    else:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host.name, target.port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
            )
        except (socket.gaierror, UnicodeError):
            raise DreamerError("unavailable", f"the {server} tool server's host {host.name} cannot be looked up") from None
        addresses = []
        for *_, sockaddr in infos:
            ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
            if ip not in addresses:
                addresses.append(ip)
    if all(classify(ip) == PUBLIC for ip in addresses):
        return addresses
    reason = address_refusal(host, addresses, named=private_allowed)
    if reason is None:
        return addresses
    who = "" if private_allowed else "; only a tool server the administrator installs may use a local or private address"
    raise DreamerError("permission_denied", f"the {server} tool server may not be reached: {reason}{who}")


class _PinnedBackend(httpcore2.AsyncNetworkBackend):
    """Connects only to the checked addresses of the one checked host; never resolves."""

    def __init__(self, host: str, addresses: list[IPAddress]) -> None:
        self._host, self._addresses = host, addresses
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        if host.strip("[]").lower() != self._host.lower():
            raise httpcore2.ConnectError(f"refusing to connect to unchecked host {host}")
        failure: Exception = httpcore2.ConnectError(f"{host} has no address")
        for address in self._addresses:
            try:
                return await self._inner.connect_tcp(str(address), port, timeout=timeout, socket_options=socket_options)
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("tool servers never use unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class AnswerTooLarge(httpx2.ReadError):
    pass


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, cap: int, sse: bool, refuse: typing.Callable[[], Exception]) -> None:
        self._inner, self._cap, self._sse, self._refuse = inner, cap, sse, refuse

    async def __aiter__(self) -> AsyncIterator[bytes]:
        since, tail = 0, b""
        async for chunk in self._inner:
            if self._sse:
                window = tail + chunk
                end = max(window.rfind(b"\n\n"), window.rfind(b"\r\n\r\n"), window.rfind(b"\r\r"))
                since = len(window) - end if end >= 0 else since + len(chunk)
                tail = window[-SSE_TAIL:]
            else:
                since += len(chunk)
            if since > self._cap:
                raise self._refuse()
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedTransport(httpx2.AsyncBaseTransport):
    """Pinned to the checked addresses; every answer at most `cap` bytes."""

    def __init__(self, server: str, host: str, addresses: list[IPAddress], cap: int, fault: Fault) -> None:
        self._server, self._cap, self._fault = server, cap, fault
        self._inner = httpx2.AsyncHTTPTransport()
        self._inner._pool = httpcore2.AsyncConnectionPool(  # the public options cannot pin addresses
            ssl_context=httpx2.create_ssl_context(), network_backend=_PinnedBackend(host, addresses)
        )

    def _too_large(self) -> Exception:
        message = f"the {self._server} tool server sent an answer larger than {self._cap} bytes and was disconnected"
        self._fault.set("payload_too_large", message)
        return AnswerTooLarge(message)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"
        response = await self._inner.handle_async_request(request)
        length = response.headers.get("content-length", "")
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if (length.isdigit() and int(length) > self._cap) or encoding not in ("", "identity"):
            await response.aclose()
            if encoding not in ("", "identity"):
                self._fault.set("protocol_error", f"the {self._server} tool server sent a compressed answer, which was not asked for")
                raise httpx2.ReadError("compressed answer")
            raise self._too_large()
        sse = response.headers.get("content-type", "").split(";")[0].strip().lower() == "text/event-stream"
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _CappedStream(response.stream, self._cap, sse, self._too_large)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
