"""Drive agent bundles in the real SDK worker, speaking the protocol of docs/ARCHITECTURE.md.

The test plays the kernel's part of the conversation: it starts
`python -S -m dreamer.sdk.worker` with the clean environment the kernel gives a
worker, sends `describe` and `invoke`, collects `log` notifications, and answers
`agents.call` syscalls by invoking another worker after checking the caller's
grants with the kernel's own permission checker. No sandbox here: these tests
are about the agents, not about isolation.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamer.kernel.permissions.check import allowed

SDK_DIR = Path(__file__).resolve().parents[2] / "sdk"
REPLY_TIMEOUT_S = 30.0
USER = {"id": 1, "name": "me", "timezone": "UTC"}


class WorkerFailed(Exception):
    """An invocation answered with a JSON-RPC error; `kind` is the kernel error code."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", ""))
        self.error = error
        self.message: str = error.get("message", "")
        self.kind: str | None = (error.get("data") or {}).get("kind")


# syscall handler: (method, params) -> result, or raise WorkerFailed to answer with an error
SyscallHandler = Callable[[str, dict[str, Any]], Any]


@dataclass
class Worker:
    agent: str
    process: subprocess.Popen[bytes]
    stderr_path: Path
    syscalls: dict[str, SyscallHandler] = field(default_factory=dict)
    logs: list[dict[str, Any]] = field(default_factory=list)
    _lines: queue.Queue[bytes | None] = field(default_factory=queue.Queue)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def start_reader(self) -> None:
        def pump() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self._lines.put(line)
            self._lines.put(None)

        threading.Thread(target=pump, daemon=True).start()

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send one request and serve the worker's syscalls until its answer arrives."""
        rid = next(self._ids)
        self._send({"id": rid, "method": method, "params": params})
        while True:
            try:
                line = self._lines.get(timeout=REPLY_TIMEOUT_S)
            except queue.Empty:
                raise AssertionError(f"worker {self.agent} did not answer {method} in {REPLY_TIMEOUT_S}s") from None
            if line is None:
                stderr = self.stderr_path.read_text(errors="replace")
                raise AssertionError(f"worker {self.agent} exited while answering {method}: {stderr[-2000:]}")
            message = json.loads(line)
            if "method" in message:
                self._serve(message)
            elif message.get("id") == rid:
                if "error" in message:
                    raise WorkerFailed(message["error"])
                return message["result"]
            else:
                raise AssertionError(f"unexpected message from worker {self.agent}: {message}")

    def _serve(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        if method == "log":
            self.logs.append(params)
            return
        handler = self.syscalls.get(method)
        try:
            if handler is None:
                raise WorkerFailed({"code": -32000, "message": f"no syscall {method} here", "data": {"kind": "not_available"}})
            result = handler(method, params)
        except WorkerFailed as failed:
            if "id" in message:
                self._send({"id": message["id"], "error": failed.error})
            return
        if "id" in message:
            self._send({"id": message["id"], "result": result})

    def describe(self) -> dict[str, dict[str, Any]]:
        return {spec["name"]: spec for spec in self.request("describe", {})["functions"]}

    def invoke(
        self, function: str, args: dict[str, Any] | None = None, *, user: dict[str, Any] | None = None, caller: str | None = None
    ) -> Any:
        params = {
            "invocation_id": f"inv_test_{next(self._ids)}",
            "function": function,
            "args": args or {},
            "user": user or USER,
            "caller": caller,
        }
        return self.request("invoke", params)["value"]

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self._send({"method": "shutdown"})
                self.process.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


def kernel_call(workers: dict[str, Worker], caller: str, granted: set[str]) -> SyscallHandler:
    """Answer `agents.call` the way the kernel does (check the grant, then invoke the
    callee), and `grants.check` from the same grants."""

    def handle(method: str, params: dict[str, Any]) -> Any:
        if method == "grants.check":
            holder = allowed(granted, params["scope"])
            return {"granted": holder is not None, "by": holder}
        agent, function = params["agent"], params["function"]
        scope = f"agent:{agent}.{function}"
        if allowed(granted, scope) is None:
            raise WorkerFailed({
                "code": -32000,
                "message": f"{caller} may not call {agent}.{function}: it needs the permission {scope}",
                "data": {"kind": "permission_denied"},
            })
        try:
            value = workers[agent].invoke(function, params["args"], caller=caller)
        except WorkerFailed as failed:
            raise WorkerFailed({"code": -32000, "message": failed.message, "data": {"kind": failed.kind}}) from None
        return {"value": value, "invocation_id": "inv_test_callee"}

    return handle
