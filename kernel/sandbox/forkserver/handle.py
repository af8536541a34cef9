"""The kernel's handle on a forked worker: what asyncio.subprocess.Process offers, without a Popen.

A forked worker is the zygote's child, not the kernel's, so the kernel cannot wait for it
itself: the zygote reports its exit status (server.py), and the kernel holds the worker's
three pipe ends, wrapped as asyncio streams. It subclasses Process only to be accepted
wherever the pool and the cgroup watchers take one; none of Process's own machinery
(its transport) is used.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable


class _WriteProtocol(asyncio.streams.FlowControlMixin):
    """Flow control for the worker's stdin, and the close waiter StreamWriter.wait_closed needs."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self._closed_future: asyncio.Future[None] = loop.create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self._closed_future.done():
            self._closed_future.set_result(None)

    def _get_close_waiter(self, stream: asyncio.StreamWriter) -> asyncio.Future[None]:
        return self._closed_future


class ForkedProcess(asyncio.subprocess.Process):
    def __init__(self, pid: int, signal_group: Callable[[ForkedProcess, int], None], loop: asyncio.AbstractEventLoop) -> None:
        # Process.__init__ is not called: it wants a subprocess transport there is none of.
        self.pid = pid
        self._loop = loop
        self._transport = None  # read by base._close_protocol_pipes
        self._signal_group = signal_group
        self._exit: asyncio.Future[int] = loop.create_future()
        self._pipes: list[asyncio.BaseTransport] = []
        # Set (under the zygote's lock) once the exit is reported: from then on the pid may
        # belong to someone else, and nothing signals it any more.
        self.gone = False
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None

    async def connect(self, stdin: int, stdout: int, stderr: int, limit: int) -> None:
        """Wrap the kernel's ends of the worker's pipes (this handle owns them from now on)."""
        loop = self._loop
        transport, protocol = await loop.connect_write_pipe(lambda: _WriteProtocol(loop), os.fdopen(stdin, "wb", buffering=0))
        self._pipes.append(transport)
        self.stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        readers = []
        for fd in (stdout, stderr):
            reader = asyncio.StreamReader(limit=limit, loop=loop)
            read_transport, _ = await loop.connect_read_pipe(
                lambda r=reader: asyncio.StreamReaderProtocol(r, loop=loop), os.fdopen(fd, "rb", buffering=0)  # type: ignore[misc]
            )
            self._pipes.append(read_transport)
            readers.append(reader)
        self.stdout, self.stderr = readers

    def exited(self, status: int) -> None:
        """Called on the handle's loop when the zygote reports the exit."""
        if not self._exit.done():
            self._exit.set_result(status)

    @property
    def returncode(self) -> int | None:
        return self._exit.result() if self._exit.done() else None

    async def wait(self) -> int:
        return await asyncio.shield(self._exit)

    def send_signal(self, signum: int) -> None:
        self._signal_group(self, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def close_protocol_pipes(self) -> None:
        """stdin and stdout of a killed worker; stderr stays open for its last words."""
        for transport in self._pipes[:2]:
            transport.close()

    async def communicate(self, input: bytes | bytearray | memoryview | None = None) -> tuple[bytes, bytes]:
        async def feed() -> None:
            if self.stdin is None:
                return
            try:
                if input:
                    self.stdin.write(input)
                    await self.stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.stdin.close()

        async def drain(stream: asyncio.StreamReader | None) -> bytes:
            return await stream.read() if stream is not None else b""

        _, out, err = await asyncio.gather(feed(), drain(self.stdout), drain(self.stderr))
        await self.wait()
        return out, err
