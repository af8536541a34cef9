"""Fixtures for the SDK tests: a clean registry, and real worker subprocesses.

The worker runs exactly as the sandbox runs it: `python -S -m dreamer.sdk.worker`
with a clean environment, pydantic from PYTHONPATH, and `dreamer/sdk` reachable
through a folder whose `dreamer/sdk` is the real sdk folder (a symlink here, a
bind mount in the sandbox).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest

import dreamer.sdk
from dreamer.sdk.registry import REGISTRY

# Generous: only reached when the worker hangs, which is itself the failure.
READ_TIMEOUT_S = 20.0


@pytest.fixture(autouse=True)
def clean_registry() -> Iterator[None]:
    saved = list(REGISTRY)
    REGISTRY.clear()
    yield
    REGISTRY.clear()
    for entry in saved:
        REGISTRY.add(entry)


class Worker:
    """One worker subprocess driven over its pipes."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        self._stderr_thread = threading.Thread(target=self._pump_stderr, daemon=True)
        self._stderr_thread.start()
        self._next_id = 0

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                self._lines.put(line)
        except (ValueError, OSError):
            pass  # closed by the test while read, as in _pump_stderr
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        # A test may close the pipe while this thread reads it; the read then raises, which only
        # means there is nothing more to read.
        try:
            for line in self.proc.stderr:
                self._stderr.append(line)
        except (ValueError, OSError):
            return

    # ---- raw I/O -------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def recv_line(self) -> bytes | None:
        try:
            return self._lines.get(timeout=READ_TIMEOUT_S)
        except queue.Empty:
            raise AssertionError(f"worker sent nothing for {READ_TIMEOUT_S}s; stderr:\n{self.stderr}") from None

    def recv(self) -> dict[str, Any]:
        line = self.recv_line()
        assert line is not None, f"worker closed its output; stderr:\n{self.stderr}"
        assert line.endswith(b"\n")
        return json.loads(line)

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self) -> int:
        code = self.proc.wait(timeout=READ_TIMEOUT_S)
        self._stderr_thread.join(timeout=READ_TIMEOUT_S)
        return code

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def stderr_with(self, text: str) -> str:
        """stderr once it holds `text` (or after READ_TIMEOUT_S): a thread reads it, and the worker's
        answer on stdout can arrive before that thread has the lines written just before it."""
        deadline = time.monotonic() + READ_TIMEOUT_S
        while text not in self.stderr and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.stderr

    # ---- requests ------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params or {}})
        response = self.recv()
        assert response["id"] == self._next_id, response
        return response

    def start_invoke(self, function: str, args: dict[str, Any] | None = None, caller: str | None = None) -> int:
        """Send an invoke without waiting for its answer (for syscall tests)."""
        self._next_id += 1
        self.send(
            {
                "jsonrpc": "2.0",
                "id": self._next_id,
                "method": "invoke",
                "params": {
                    "invocation_id": f"inv-{self._next_id}",
                    "function": function,
                    "args": args if args is not None else {},
                    "user": {"id": 7, "name": "ada", "timezone": "Europe/Paris"},
                    "caller": caller,
                },
            }
        )
        return self._next_id

    def invoke(self, function: str, args: dict[str, Any] | None = None, caller: str | None = None) -> dict[str, Any]:
        id_ = self.start_invoke(function, args, caller)
        response = self.recv()
        assert response["id"] == id_, response
        return response

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


@pytest.fixture(scope="session")
def worker_pythonpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    """site-packages (for pydantic) and a folder where dreamer/sdk is the real sdk."""
    root = tmp_path_factory.mktemp("runtime")
    (root / "dreamer").mkdir()
    (root / "dreamer" / "sdk").symlink_to(Path(dreamer.sdk.__file__).parent, target_is_directory=True)
    site_packages = Path(pydantic.__file__).parent.parent
    return os.pathsep.join([str(root), str(site_packages)])


@pytest.fixture
def start_worker(tmp_path: Path, worker_pythonpath: str) -> Iterator[Any]:
    """start_worker({"grocery/server.py": source, ...}, entry="grocery.server") -> Worker"""
    started: list[Worker] = []

    def start(files: dict[str, str], entry: str = "grocery.server", agent: str = "grocery") -> Worker:
        bundle = tmp_path / "bundle"
        data = tmp_path / "data"
        data.mkdir(exist_ok=True)
        for name, source in files.items():
            path = bundle / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": worker_pythonpath,
            "DREAMER_AGENT_DIR": str(bundle),
            "DREAMER_DATA_DIR": str(data),
            "DREAMER_ENTRY": entry,
            "DREAMER_AGENT": agent,
        }
        proc = subprocess.Popen(
            [sys.executable, "-S", "-m", "dreamer.sdk.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
        )
        worker = Worker(proc)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.kill()
