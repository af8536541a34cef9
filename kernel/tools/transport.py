"""How the kernel reaches an MCP server: a stdio server inside the user's sandbox, or a
remote streamable-HTTP server with the headers the kernel keeps for it.

The stdio transport is the mcp package's stdio idea on top of the kernel's own
sandbox (bwrap by default, same limits as agent workers), with the kernel's rules for
what the server writes: a line larger than the message limit, or a line that is not
JSON-RPC, ends the connection with one sentence saying so (`Fault`), and stderr is
kept only as a short tail for error messages, so a flood of output costs nothing.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

import anyio
import httpx2
import mcp_types
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox.base import Sandbox, SandboxSpec
from dreamer.kernel.tools.remote import CappedTransport, admitted_addresses, remote_target

log = logging.getLogger("dreamer.tools")

STDERR_TAIL_LINES = 20
STDERR_LINE_CHARS = 300
CLOSE_GRACE_S = 1.0
NOTIFICATIONS_PER_S = 100  # per server connection; a flood beyond is dropped unparsed
NOTIFICATION_BURST = 200
YIELD_EVERY_LINES = 64


@dataclass
class Fault:
    """Why a connection ended, when the server did something wrong (set once)."""

    code: str | None = None
    message: str | None = None
    stderr: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=STDERR_TAIL_LINES))
    exit_status: int | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    notifications_passed: int = 0  # notifications handed to the session
    notifications_dropped: int = 0  # over the rate limit, dropped unparsed

    def set(self, code: str, message: str) -> None:
        if self.code is None:
            self.code, self.message = code, message
        self.ended.set()

    def tail(self) -> str:
        lines = [line for line in self.stderr if line.strip()]
        return "; ".join(lines[-3:])


@contextlib.asynccontextmanager
async def sandboxed_stdio(
    sandbox: Sandbox, spec: SandboxSpec, fault: Fault, *, label: str, max_line_bytes: int
) -> AsyncIterator[TransportStreams]:
    process = await sandbox.start(spec)
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](16)

    async def stdout_reader() -> None:
        assert process.stdout is not None
        allowance, refilled, lines = float(NOTIFICATION_BURST), time.monotonic(), 0
        async with to_session:
            while True:
                lines += 1
                if lines % YIELD_EVERY_LINES == 0:
                    await asyncio.sleep(0)  # buffered lines are read without yielding: let other users in
                try:
                    line = await process.stdout.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    fault.set("payload_too_large", f"the {label} tool server sent a message larger than {max_line_bytes} bytes and was stopped")
                    sandbox.kill(process)
                    return
                if not line:
                    status = await _status(process)
                    fault.exit_status = status
                    fault.set("worker_crashed", f"the {label} tool server exited with status {status}")
                    return
                if not line.strip():
                    continue
                if b'"method"' in line and b'"id"' not in line:
                    # A notification (no id): at most NOTIFICATIONS_PER_S a second, on average; the
                    # rest are dropped before they cost a parse. (A line with "id" is parsed as usual.)
                    now = time.monotonic()
                    allowance = min(float(NOTIFICATION_BURST), allowance + (now - refilled) * NOTIFICATIONS_PER_S)
                    refilled = now
                    if allowance < 1:
                        fault.notifications_dropped += 1
                        if fault.notifications_dropped == 1:  # once per connection: the flood itself is not logged
                            log.warning("the %s tool server sends more than %d notifications a second; the rest are dropped", label, NOTIFICATIONS_PER_S)
                        continue
                    allowance -= 1
                    fault.notifications_passed += 1
                try:
                    message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValueError:
                    fault.set("protocol_error", f"the {label} tool server wrote something that is not JSON-RPC and was stopped")
                    sandbox.kill(process)
                    return
                try:
                    await to_session.send(SessionMessage(message))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def stdin_writer() -> None:
        assert process.stdin is not None
        async with from_session:
            async for item in from_session:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                try:
                    process.stdin.write(data.encode())
                    await process.stdin.drain()
                except (ConnectionError, BrokenPipeError, RuntimeError):
                    return

    async def stderr_reader() -> None:
        assert process.stderr is not None
        while True:
            try:
                line = await process.stderr.readline()
            except (ValueError, asyncio.LimitOverrunError):
                continue  # an over-long line is dropped; only the tail is ever shown
            if not line:
                return
            fault.stderr.append(line.decode("utf-8", "replace").rstrip()[:STDERR_LINE_CHARS])

    tasks = [asyncio.create_task(t()) for t in (stdout_reader, stdin_writer, stderr_reader)]
    try:
        yield read_stream, write_stream
    finally:
        # Closing stdin asks the server to exit (the MCP stdio shutdown); then the group is killed.
        with contextlib.suppress(Exception):
            if process.stdin is not None:
                process.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(_poll_exit(process)), CLOSE_GRACE_S)
        sandbox.kill(process)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_poll_exit(process), 2.0)
        pipes = getattr(process, "_transport", None)
        if pipes is not None:
            pipes.close()  # reaped now, not when a later garbage collection meets a closed loop
        fault.ended.set()


async def _poll_exit(process: asyncio.subprocess.Process) -> None:
    # Not process.wait(): it also waits for pipes a killed child may still hold.
    while process.returncode is None:
        await asyncio.sleep(0.02)


async def _status(process: asyncio.subprocess.Process) -> int:
    try:
        await asyncio.wait_for(_poll_exit(process), 2.0)
    except TimeoutError:
        return -1
    return process.returncode if process.returncode is not None else -1


@contextlib.asynccontextmanager
async def remote_http(
    server: str, url: str, headers: Mapping[str, str], fault: Fault, *, timeout: float, max_bytes: int,
    private_allowed: bool,
) -> AsyncIterator[TransportStreams]:
    """Streamable HTTP with the kernel-kept headers (nothing of them reaches the bundle),
    to checked addresses only, every answer capped (kernel/tools/remote.py)."""
    target = remote_target(server, url)
    try:
        addresses = await admitted_addresses(server, target, private_allowed=private_allowed)
    except DreamerError as exc:
        fault.set(exc.code, exc.message)
        raise
    transport = CappedTransport(server, target.host.name, addresses, max_bytes, fault)
    client = httpx2.AsyncClient(
        headers=dict(headers), timeout=httpx2.Timeout(timeout, read=timeout), transport=transport,
        follow_redirects=False, trust_env=False,
    )
    try:
        async with client, streamable_http_client(url, http_client=client) as streams:
            yield streams
    finally:
        fault.ended.set()
