"""One running worker process and the JSON-RPC conversation with it.

A worker serves one request at a time (the pool leases it out exclusively), so
the conversation is a simple loop: send the request, then read lines until its
response arrives, answering the worker's syscalls on the way. Anything the
worker does wrong — dies, hangs, sends garbage or too much — ends with the
process group killed and a DreamerError that says so in one sentence.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from dreamer.contracts.errors import STATUS, DreamerError
from dreamer.kernel.store.text import storable_text
from dreamer.sdk.protocol import ParseError, decode_json, encode

log = logging.getLogger("dreamer.workers")

# Every log line costs a stored row and objects in memory whatever its length, so
# each is charged this much on top of its text: a flood of empty lines meets the
# max_log_bytes cap as surely as a flood of long ones.
LINE_COST_BYTES = 128

SyscallHandler = Callable[[str, dict[str, Any]], Awaitable[Any]]
LogSink = Callable[[str, str, str], None]  # (stream, level, message)


def log_line(message: Any, fields: Any) -> str:
    """`ctx.log("greeting someone", name="Ada")` as the stored line `greeting someone name=Ada`.

    The log keeps text lines, so the fields go on the line, where `dreamer logs` and
    `dreamer dev` show them; a value that is not a plain word is written as JSON."""
    text = str(message)
    if not isinstance(fields, dict):
        return text
    parts = [text]
    for name, value in fields.items():
        plain = isinstance(value, str) and value and not any(c.isspace() or c in "\"=" for c in value)
        parts.append(f"{name}={value if plain else json.dumps(value, ensure_ascii=False, default=repr)}")
    return " ".join(parts)


@dataclass
class WorkerConnection:
    process: asyncio.subprocess.Process
    label: str  # "grocery (user me)" — used in error messages
    kill_group: Callable[[asyncio.subprocess.Process], None]
    max_log_bytes: int = 1024 * 1024
    started_at: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    _next_id: int = 0
    _sink: LogSink | None = None
    _log_bytes: int = 0
    _stderr_task: asyncio.Task[None] | None = None
    # Set by kill(): a killed worker may not be reaped yet, but must not serve again.
    _killed: bool = False

    def __post_init__(self) -> None:
        self._stderr_task = asyncio.get_running_loop().create_task(self._pump_stderr())

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and not self._killed

    async def request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        timeout: float,
        syscalls: SyscallHandler | None = None,
        sink: LogSink | None = None,
        what: str = "",
    ) -> Any:
        """Send one request and return its result; raise DreamerError on any failure."""
        what = what or method
        self._next_id += 1
        rid = self._next_id
        self._sink, self._log_bytes = sink, 0
        try:
            async with asyncio.timeout(timeout):
                await self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
                while True:
                    message = await self._read()
                    if "method" in message:
                        await self._serve_syscall(message, syscalls)
                        continue
                    if message.get("id") != rid:
                        raise self._broken(f"answered a request it was not asked ({_clip(repr(message.get('id')))})")
                    if "error" in message:
                        raise _remote_error(message["error"], what)
                    if "result" not in message:
                        raise self._broken("sent a response with neither result nor error")
                    return message["result"]
        except TimeoutError:
            self.kill()
            raise DreamerError("timeout", f"{what} did not finish within {timeout:g} s; its worker was stopped") from None
        except DreamerError:
            raise
        except BaseException:
            # Cancelled (the client went away) or failed mid-conversation: the worker's
            # next line would answer a request nobody waits for, so it must not go back
            # to the pool, where the next caller would meet that line.
            self.kill()
            raise
        finally:
            self.last_used = time.monotonic()
            self._sink = None

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        if self.alive and self.process.stdin is not None:
            self.process.stdin.write(encode({"jsonrpc": "2.0", "method": method, "params": params or {}}))

    def kill(self) -> None:
        self._killed = True
        self.kill_group(self.process)

    async def close(self, grace: float = 1.0) -> None:
        """Ask the worker to exit, then make sure it has."""
        try:
            self.notify("shutdown")
            if self.process.stdin is not None:
                self.process.stdin.close()
            await asyncio.wait_for(self.process.wait(), grace)
        except (TimeoutError, ConnectionError, ProcessLookupError):
            pass
        self.kill()
        if self._stderr_task is not None:
            self._stderr_task.cancel()

    # -- internals -----------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(encode(message))
            await self.process.stdin.drain()
        except (ConnectionError, BrokenPipeError):
            raise await self._died() from None

    async def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        try:
            line = await self.process.stdout.readline()
        except (ValueError, asyncio.LimitOverrunError):
            raise self._broken("sent a message larger than the kernel accepts", code="payload_too_large") from None
        if not line:
            raise await self._died()
        try:
            # Strict JSON: no NaN, no integers too long to convert, no nesting deeper than
            # the parser's recursion limit; each is one more way to say "not a message".
            message = decode_json(line)
        except ParseError:
            raise self._broken("sent something that is not a protocol message") from None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise self._broken("sent something that is not a JSON-RPC 2.0 message")
        return message

    async def _serve_syscall(self, message: dict[str, Any], syscalls: SyscallHandler | None) -> None:
        method, params, mid = message.get("method"), message.get("params") or {}, message.get("id")
        if not isinstance(method, str) or not isinstance(params, dict):
            raise self._broken("sent a malformed syscall")
        if method == "log" and mid is None:
            self._log("log", str(params.get("level", "info")), log_line(params.get("message", ""), params.get("fields")))
            return
        if mid is None:
            return  # unknown notifications are ignored, as JSON-RPC allows
        if not isinstance(mid, (str, int)) or isinstance(mid, bool):
            raise self._broken("sent a syscall whose id is neither a string nor an integer")
        try:
            if syscalls is None:
                raise DreamerError("not_available", f"syscall {method} is not available here")
            result = await syscalls(method, params)
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": mid, "result": result}
        except DreamerError as exc:
            reply = {"jsonrpc": "2.0", "id": mid, "error": {"code": -32000, "message": exc.message, "data": {"kind": exc.code}}}
        except Exception as exc:
            log.exception("syscall %s from the %s worker failed", _clip(method), self.label)
            failed = f"the kernel failed to serve {_clip(method)} ({type(exc).__name__}); see the kernel log"
            reply = {"jsonrpc": "2.0", "id": mid, "error": {"code": -32000, "message": failed, "data": {"kind": "internal"}}}
        await self._send(reply)

    def _log(self, stream: str, level: str, text: str) -> None:
        if self._sink is None or self._log_bytes > self.max_log_bytes:
            return
        self._log_bytes += len(text) + LINE_COST_BYTES
        if self._log_bytes > self.max_log_bytes:
            text = f"(log output over {self.max_log_bytes} bytes; the rest was dropped)"
        self._sink(stream, level, text)

    async def _pump_stderr(self) -> None:
        stream = self.process.stderr
        if stream is None:
            return
        while True:
            try:
                line = await stream.readline()
            except (ValueError, asyncio.LimitOverrunError):
                continue  # an over-long stderr line is dropped, not fatal
            if not line:
                return
            self._log("stderr", "info", line.decode("utf-8", "replace").rstrip("\n"))

    def _broken(self, problem: str, code: str = "protocol_error") -> DreamerError:
        self.kill()
        return DreamerError(code, f"the {self.label} worker {problem} and was stopped")

    async def _died(self) -> DreamerError:
        try:
            status = await asyncio.wait_for(self.process.wait(), 2.0)
        except TimeoutError:
            self.kill()
            status = await self.process.wait()
        # bwrap reports a child killed by signal N as exit status 128+N, like a shell.
        signum = -status if status < 0 else status - 128 if 128 < status < 128 + 65 else 0
        if signum:
            try:
                how = f"was killed by signal {signal.Signals(signum).name}"
            except ValueError:
                how = f"was killed by signal {signum}"
        else:
            how = f"exited with status {status}"
        return DreamerError("worker_crashed", f"the {self.label} worker {how} before answering")


def _clip(text: str, limit: int = 80) -> str:
    """Worker-chosen text quoted in a kernel message stays short."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _remote_error(error: Any, what: str) -> DreamerError:
    if not isinstance(error, dict):
        return DreamerError("protocol_error", f"{what} failed with a malformed error")
    raw = error.get("data")
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    kind = str(data.get("kind") or "agent_error")
    message = storable_text(str(error.get("message") or "failed")[:2000])
    if kind not in STATUS:
        kind = "agent_error"
    details = {k: v for k, v in data.items() if k in ("type",)}
    return DreamerError(kind, message, **details)
