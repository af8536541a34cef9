"""A lean HTTP/1.1 load generator: keep-alive connections on raw asyncio streams.

httpx spends about as much CPU per request as the kernel does to serve a warm call,
and on a 2-core machine the client's share is taken from the server. Like wrk,
this client does almost nothing per request (a prepared request, a parsed status
line and Content-Length), so what it measures is the server.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass
class LoadResult:
    elapsed_s: float
    latencies_s: list[float] = field(default_factory=list)
    errors: int = 0


def _request(host: str, path: str, token: str, body: bytes) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _read_response(reader: asyncio.StreamReader) -> int:
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("the server closed the connection")
    status = int(status_line.split(b" ", 2)[1])
    length = 0
    chunked = False
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value.strip())
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if chunked:
        while True:
            size = int((await reader.readline()).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    elif length:
        await reader.readexactly(length)
    return status


async def run(url: str, path: str, token: str, body: bytes, *, clients: int, total: int) -> LoadResult:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    request = _request(f"{host}:{port}", path, token, body)
    result = LoadResult(0.0)
    left = [total]

    async def client() -> None:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            while left[0] > 0:
                left[0] -= 1
                started = time.perf_counter()
                writer.write(request)
                status = await _read_response(reader)
                result.latencies_s.append(time.perf_counter() - started)
                result.errors += status != 200
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    result.elapsed_s = time.perf_counter() - started
    return result
