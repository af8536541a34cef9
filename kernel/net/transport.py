"""One HTTP exchange with a server at addresses the policy has already checked.

The addresses are pinned: httpcore is given a network backend that connects to
exactly those IPs, whatever host name it asks for, so there is no second DNS
lookup between the check and the connection (the DNS-rebinding window). The URL
keeps the host name, so the Host header, TLS SNI and certificate checks still
use the name. httpcore is used directly rather than through httpx because httpx
would follow proxy variables from the environment (and would want to resolve
the name itself); httpcore does neither.
"""

from __future__ import annotations

import os
import ssl
import typing
from dataclasses import dataclass

import httpcore

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.net.policy import IPAddress, Target

REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ssl_context: ssl.SSLContext | None = None


def _tls() -> ssl.SSLContext:
    # Loading the CA bundle takes a few milliseconds; do it once per kernel.
    global _ssl_context
    if _ssl_context is None:
        _ssl_context = httpcore.default_ssl_context()
    return _ssl_context


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects to the checked addresses in order; never resolves a name."""

    def __init__(self, host: str, addresses: list[IPAddress]) -> None:
        self._host = host
        self._addresses = addresses
        self._inner = httpcore.AnyIOBackend()
        self.connected: str | None = None

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        if host != self._host:  # only the origin this exchange was checked for
            raise httpcore.ConnectError(f"refusing to connect to unchecked host {host}")
        failure: Exception = httpcore.ConnectError(f"{host} has no address")
        for address in self._addresses:
            try:
                stream = await self._inner.connect_tcp(str(address), port, timeout=timeout, socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            self.connected = str(address)
            return stream
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("fetches never use unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@dataclass
class Exchange:
    status: int
    headers: list[tuple[str, str]]  # names lowercased, in the order received
    body: bytes
    address: str | None  # the IP the connection went to
    location: str | None = None  # set for a redirect; its body is not read

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name), None)


async def exchange(
    target: Target,
    method: str,
    headers: list[tuple[str, str]],
    body: bytes | None,
    addresses: list[IPAddress],
    *,
    max_bytes: int,
    timeout: float,
    tls: ssl.SSLContext | None = None,
) -> Exchange:
    """Send one request and read the answer, its body cut at max_bytes
    (payload_too_large). Transport failures become DreamerErrors."""
    backend = PinnedBackend(target.host.name, addresses)
    url = httpcore.URL(scheme=target.scheme.encode(), host=target.host.name.encode(), port=target.port,
                       target=target.path.encode("ascii"))
    sent = [(b"Host", target.authority.encode("ascii"))] + [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    if body is None and method in ("POST", "PUT", "PATCH"):
        body = b""  # so a Content-Length: 0 goes out, which some servers insist on
    limits = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
    where = target.audit
    try:
        async with httpcore.AsyncConnectionPool(
            ssl_context=tls or _tls(), network_backend=backend, max_connections=1, retries=0
        ) as pool:
            async with pool.stream(method, url, headers=sent, content=body, extensions={"timeout": limits}) as response:
                received = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in response.headers]
                result = Exchange(response.status, received, b"", backend.connected)
                location = result.header("location")
                if response.status in REDIRECTS and location is not None:
                    result.location = location
                    return result
                result.body = await _read(response, result, max_bytes, where)
                return result
    except httpcore.TimeoutException:
        raise DreamerError("timeout", f"{where} did not answer within {timeout:.3g} s") from None
    except httpcore.ConnectError as exc:
        raise DreamerError("fetch_failed", f"could not connect to {target.authority}: {_reason(exc)}") from None
    except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
        raise DreamerError("fetch_failed", f"the exchange with {target.authority} failed: {_reason(exc)}") from None
    except httpcore.UnsupportedProtocol as exc:
        raise DreamerError("invalid_argument", f"{where} cannot be fetched: {_reason(exc)}") from None


async def _read(response: httpcore.Response, result: Exchange, max_bytes: int, where: str) -> bytes:
    declared = result.header("content-length")
    too_large = DreamerError(
        "payload_too_large", f"the response from {where} is larger than {max_bytes} bytes; pass a larger max_bytes if it is expected"
    )
    if declared is not None and declared.strip().isdigit() and int(declared) > max_bytes:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_stream():
        size += len(chunk)
        if size > max_bytes:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _reason(exc: BaseException) -> str:
    # anyio wraps the OSError that says what happened ("Connection refused") in
    # one that does not ("All connection attempts failed"); prefer the inner one.
    inner: BaseException | None = exc
    while inner is not None:
        if isinstance(inner, ssl.SSLCertVerificationError):
            return f"the TLS certificate was not accepted ({inner.verify_message})"
        if isinstance(inner, ssl.SSLError):
            return f"TLS failed ({inner.reason or inner.strerror or 'handshake error'})"
        if isinstance(inner, OSError) and inner.errno is not None:
            return os.strerror(inner.errno).lower()
        inner = inner.__cause__ or inner.__context__
    text = str(exc).strip().splitlines()
    reason = text[0] if text else type(exc).__name__
    return reason if len(reason) <= 200 else reason[:199] + "…"
