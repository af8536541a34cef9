"""One live connection to one MCP server, owned by a task of its own.

The mcp package's Client is an async context manager whose task group must be
entered and left by the same task, while calls come from many request tasks. So a
session runs an owner task that enters the Client, lists the tools, reports ready
and then waits to be stopped; calls go through the connected Client from any task.
Each call also races the transport's end, so a server that dies mid-call fails
that call at once instead of leaving it to the timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import mcp_types
from mcp import Client
# The streams an mcp Transport yields (listed in that module's __all__; mcp.client exports only Transport).
from mcp.client._transport import TransportStreams
from mcp.shared.exceptions import MCPError

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.tools.naming import usable_tool_name
from dreamer.kernel.tools.transport import Fault

log = logging.getLogger("dreamer.tools")

MAX_TOOLS = 256
MAX_DESCRIPTION = 2000

TransportFactory = Callable[[Fault], AbstractAsyncContextManager[TransportStreams]]


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "description": self.description,
            "input_schema": self.input_schema, "annotations": self.annotations,
        }


def tool_infos(tools: list[mcp_types.Tool], server: str) -> tuple[dict[str, ToolInfo], dict[str, str]]:
    """The usable tools a server declares, and for each tool that cannot be used, one sentence why."""
    found: dict[str, ToolInfo] = {}
    problems: dict[str, str] = {}
    seen: dict[str, int] = {}
    for tool in tools[: MAX_TOOLS + 1]:
        seen[tool.name.lower()] = seen.get(tool.name.lower(), 0) + 1
    for extra in tools[MAX_TOOLS:]:
        problems[extra.name] = f"{server} declares more than {MAX_TOOLS} tools; only the first {MAX_TOOLS} are used"
    for tool in tools[:MAX_TOOLS]:
        name = tool.name
        if seen[name.lower()] > 1:
            problems[name] = f"{server} declares more than one tool named {name[:64]!r}; none of them can be used"
            continue
        if not usable_tool_name(name):
            problems[name] = f"{server} declares a tool named {name[:64]!r}, which is not a usable tool name"
            continue
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object"}
        notes = tool.annotations.model_dump(exclude_none=True) if tool.annotations else {}
        found[name] = ToolInfo(name, (tool.description or "")[:MAX_DESCRIPTION], schema, notes)
    return found, problems


@dataclass
class ToolSession:
    server: str
    transport: TransportFactory
    fault: Fault = field(default_factory=Fault)
    tools: dict[str, ToolInfo] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)  # tool name → why it cannot be used
    started_at: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    _client: Client | None = None
    _ready: asyncio.Event = field(default_factory=asyncio.Event)
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _done: asyncio.Event = field(default_factory=asyncio.Event)
    _owner: asyncio.Task[None] | None = None
    _error: BaseException | None = None

    @property
    def problems(self) -> list[str]:
        return list(dict.fromkeys(self.refused.values()))

    @property
    def alive(self) -> bool:
        return self._ready.is_set() and not self._done.is_set() and not self.fault.ended.is_set()

    async def open(self, timeout: float) -> None:
        """Start the server and list its tools; a clear DreamerError when it cannot."""
        self._owner = asyncio.get_running_loop().create_task(self._own())
        ready = asyncio.ensure_future(self._ready.wait())
        done = asyncio.ensure_future(self._done.wait())
        try:
            await asyncio.wait({ready, done}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
            done.cancel()
        if self._ready.is_set() and not self._done.is_set():
            return
        if not self._done.is_set():
            await self.close()
            raise DreamerError("timeout", f"the {self.server} tool server did not answer within {timeout:g} s and was stopped")
        raise self._failure("could not start")

    async def call(self, tool: str, args: dict[str, Any], timeout: float) -> mcp_types.CallToolResult:
        client = self._client
        if client is None or not self.alive:
            raise self._failure("is not running")
        self.last_used = time.monotonic()
        call = asyncio.ensure_future(client.call_tool(tool, args))
        ended = asyncio.ensure_future(self.fault.ended.wait())
        stopped = asyncio.ensure_future(self._done.wait())
        try:
            await asyncio.wait({call, ended, stopped}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            call.cancel()
            raise
        finally:
            ended.cancel()
            stopped.cancel()
        if not call.done():
            call.cancel()
            if self.fault.ended.is_set() or self._done.is_set():
                raise self._failure("stopped during the call")
            # A server that does not answer in time is presumed stuck: a fresh one serves the next call.
            await self.close()
            raise DreamerError(
                "timeout", f"{self.server}.{tool} did not answer within {timeout:g} s; its server was stopped and restarts on the next call"
            )
        try:
            return call.result()
        except MCPError as exc:
            if await self._ended_soon():
                raise self._failure("stopped during the call") from None
            raise DreamerError("tool_error", f"{self.server}.{tool} failed: {_clip(exc.error.message)}") from None
        except (DreamerError, asyncio.CancelledError):
            raise
        except Exception as exc:  # noqa: BLE001 - the transport's own failures, in one sentence
            if self.fault.code:
                raise self._failure("stopped during the call") from None
            raise DreamerError("tool_error", f"{self.server}.{tool} failed: {type(exc).__name__}: {_clip(str(exc))}") from None

    async def _ended_soon(self) -> bool:
        """Whether the transport ends right after an error: "connection closed" then has a real cause."""
        try:
            await asyncio.wait_for(self.fault.ended.wait(), 0.5)
        except TimeoutError:
            return False
        return self.fault.code is not None

    async def close(self) -> None:
        self._stop.set()
        if self._owner is not None and not self._owner.done():
            # A session that never became ready is stuck in its handshake: it cannot see the
            # stop event, so it is cancelled (its transport still stops the server on the way out).
            grace = 5.0 if self._ready.is_set() else 0.0
            try:
                await asyncio.wait_for(asyncio.shield(self._owner), grace)
            except (TimeoutError, Exception):  # noqa: BLE001 - closing must not fail
                self._owner.cancel()
                with contextlib.suppress(BaseException):
                    await self._owner

    async def _own(self) -> None:
        try:
            async with self.transport(self.fault) as streams, Client(
                _Streams(streams), mode="legacy", cache=None
            ) as client:
                listed = await client.list_tools()
                self.tools, self.refused = tool_infos(list(listed.tools), self.server)
                for problem in dict.fromkeys(self.refused.values()):
                    log.warning("%s", problem)
                self._client = client
                self._ready.set()
                stop = asyncio.ensure_future(self._stop.wait())
                end = asyncio.ensure_future(self.fault.ended.wait())
                try:
                    await asyncio.wait({stop, end}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop.cancel()
                    end.cancel()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - kept to explain the failure in one sentence
            self._error = exc
        finally:
            self._client = None
            self._done.set()

    def _failure(self, what: str) -> DreamerError:
        if self.fault.code and self.fault.message:
            tail = self.fault.tail()
            return DreamerError(self.fault.code, self.fault.message + (f" ({_clip(tail, 300)})" if tail else ""))
        error = _root(self._error)
        if isinstance(error, DreamerError):
            return DreamerError(error.code, f"the {self.server} tool server {what}: {error.message}")
        if error is not None:
            detail = f"{type(error).__name__}: {_clip(str(error))}" if str(error) else type(error).__name__
            return DreamerError("tool_error", f"the {self.server} tool server {what} ({detail})")
        return DreamerError("worker_crashed", f"the {self.server} tool server {what}")


class _Streams:
    """A ready pair of streams as the Transport the mcp Client expects."""

    def __init__(self, streams: TransportStreams) -> None:
        self.streams = streams

    async def __aenter__(self) -> TransportStreams:
        return self.streams

    async def __aexit__(self, *exc: object) -> None:
        return None


def _root(error: BaseException | None) -> BaseException | None:
    """The first real cause inside anyio's exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def result_value(result: mcp_types.CallToolResult, name: str) -> Any:
    """What an agent gets back: the structured result when there is one, else the text."""
    texts = [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]
    if result.is_error:
        raise DreamerError("tool_error", f"{name} reported an error: {_clip(' '.join(texts) or 'no message', 500)}")
    if result.structured_content is not None:
        value = result.structured_content
        # MCPServer wraps a non-object return value as {"result": value}.
        if isinstance(value, dict) and set(value) == {"result"}:
            return value["result"]
        return value
    if len(texts) == len(result.content):
        joined = "\n".join(texts)
        with contextlib.suppress(ValueError):
            return json.loads(joined) if len(texts) == 1 and joined[:1] in "[{" else joined
        return joined
    return [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]
