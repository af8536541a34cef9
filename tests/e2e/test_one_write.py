"""kernel/connguard.py's OneWrite: a small response leaves in one write (status line,
headers and body together), nothing waits past the current turn of the event loop, and
the bytes keep their order; then the same through a real kernel's socket."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from kernelproc import KernelProc

from dreamer.kernel.connguard import HOLD_AT_MOST, OneWrite


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def get_write_buffer_size(self) -> int:
        return 0


def _run(steps: Any) -> _Transport:
    async def main() -> _Transport:
        raw = _Transport()
        await steps(OneWrite(raw, asyncio.get_running_loop()), raw)
        return raw

    return asyncio.run(main())


def test_headers_and_body_written_together_leave_in_one_write() -> None:
    async def steps(t: OneWrite, raw: _Transport) -> None:
        t.write(b"HTTP/1.1 200 OK\r\n\r\n")
        t.write(b"{}")
        assert raw.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]
        await asyncio.sleep(0)
        assert raw.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]

    _run(steps)


def test_a_write_with_nothing_after_it_leaves_at_the_end_of_the_turn() -> None:
    async def steps(t: OneWrite, raw: _Transport) -> None:
        t.write(b"HTTP/1.1 200 OK\r\n\r\n")  # a stream's headers; its first chunk comes later
        await asyncio.sleep(0)
        assert raw.writes == [b"HTTP/1.1 200 OK\r\n\r\n"]
        t.write(b"chunk")
        await asyncio.sleep(0)
        assert raw.writes == [b"HTTP/1.1 200 OK\r\n\r\n", b"chunk"]

    _run(steps)


def test_large_writes_are_not_held_or_copied_and_order_is_kept() -> None:
    big = b"x" * (HOLD_AT_MOST + 1)

    async def steps(t: OneWrite, raw: _Transport) -> None:
        t.write(b"head")
        t.write(big)
        assert raw.writes == [b"head", big]
        t.write(big)
        assert raw.writes == [b"head", big, big]

    _run(steps)


def test_close_sends_what_waits_and_abort_drops_it() -> None:
    async def steps(t: OneWrite, raw: _Transport) -> None:
        t.write(b"bye")
        t.close()
        assert raw.writes == [b"bye"] and raw.closed

    _run(steps)

    async def aborting(t: OneWrite, raw: _Transport) -> None:
        t.write(b"never")
        t.abort()
        await asyncio.sleep(0)
        assert raw.writes == [] and raw.aborted

    _run(aborting)


def test_a_kernels_answer_arrives_whole_in_one_segment(kernel: KernelProc) -> None:
    """The status line, headers and body of a small answer in one read of the socket, for
    a plain route and for a call."""
    token = kernel.token
    for request in (
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        b"POST /v1/agents/grocery/functions/list_items HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        + token.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"args\": {}}",
    ):
        with socket.create_connection(("127.0.0.1", kernel.port), timeout=30) as s:
            s.sendall(request)
            first = s.recv(65536)
        head, _, body = first.partition(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        assert len(body) == length, first
