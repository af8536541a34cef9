"""run: a command in the workspace, inside the agent's sandbox, bounded in time and output.

The command runs in a process group of its own; at the deadline the whole group
is killed. Output is read as it comes and only the head and the tail are kept,
so a command that prints gigabytes costs bounded memory; past MAX_READ_BYTES
the command is stopped rather than read to the end.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from .workspace import ToolError

HEAD_BYTES = 8 * 1024
TAIL_BYTES = 8 * 1024
MAX_READ_BYTES = 64 * 1024 * 1024
MAX_TIMEOUT_S = 600.0
DEFAULT_TIMEOUT_S = 60.0


def command_env() -> dict[str, str]:
    """The sandbox's environment, with the runtime's bin folder first so python, ruff and pytest resolve."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMER_")}
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = f"{bindir}:{os.environ.get('PATH') or '/usr/bin:/bin'}"
    env.setdefault("HOME", "/tmp")
    # Children run `python -S`: the runtime's packages must be on PYTHONPATH (the sandbox
    # already puts them there; a worker outside one may not).
    paths = sysconfig.get_paths()
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(
        p for p in [*(env.get("PYTHONPATH") or "").split(os.pathsep), paths["purelib"], paths["platlib"]] if p))
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


class Capture:
    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > TAIL_BYTES:
                del self.tail[: len(self.tail) - TAIL_BYTES]

    def text(self) -> str:
        head = self.head.decode("utf-8", "replace")
        if self.total <= HEAD_BYTES + TAIL_BYTES and self.total == len(self.head) + len(self.tail):
            return head + self.tail.decode("utf-8", "replace")
        cut = self.total - len(self.head) - len(self.tail)
        return head + f"\n... [{cut} bytes of output left out] ...\n" + self.tail.decode("utf-8", "replace")


def python_argv(*args: str) -> list[str]:
    """This runtime's Python without the site module: the sandbox's PYTHONPATH already names
    the packages, and site would run .pth hooks (an editable install's finder) that point
    at folders the sandbox does not show."""
    return [sys.executable, "-S", *args]


def run_argv(argv: list[str] | str, cwd: Path, timeout: float = DEFAULT_TIMEOUT_S, *, shell: bool = False,
             pythonpath: str | None = None) -> dict:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ToolError("invalid_argument", "timeout is a number of seconds above 0")
    timeout = min(float(timeout), MAX_TIMEOUT_S)
    started = time.monotonic()
    env = command_env()
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, env.get("PYTHONPATH")) if p)
    try:
        process = subprocess.Popen(
            argv, cwd=cwd, shell=shell, executable="/bin/bash" if shell else None, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
    except OSError as exc:
        raise ToolError("run_failed", f"could not start the command: {exc.strerror or exc}") from None
    capture = Capture()
    stopped = None
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    fd = process.stdout.fileno()
    try:
        while True:
            left = timeout - (time.monotonic() - started)
            if left <= 0:
                stopped = f"timed out after {timeout:g} s"
                break
            if not selector.select(min(left, 0.5)):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            capture.add(chunk)
            if capture.total > MAX_READ_BYTES:
                stopped = f"stopped after {MAX_READ_BYTES} bytes of output"
                break
    finally:
        selector.close()
        if stopped is not None:
            _kill_group(process)
        try:
            code = process.wait(timeout=max(0.1, timeout - (time.monotonic() - started)) if stopped is None else 5)
        except subprocess.TimeoutExpired:
            # The output closed but the process lingers (a daemon it left): the group goes too.
            _kill_group(process)
            code = process.wait()
            stopped = stopped or f"timed out after {timeout:g} s"
        process.stdout.close()
    return {
        "exit_code": code, "output": capture.text(), "output_bytes": capture.total,
        "timed_out": stopped is not None and stopped.startswith("timed out"), "stopped": stopped,
        "seconds": round(time.monotonic() - started, 3),
    }


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(cwd: Path, cmd: str, timeout: float = DEFAULT_TIMEOUT_S) -> dict:
    """A shell command line (bash), run in the workspace folder."""
    if not isinstance(cmd, str) or not cmd.strip():
        raise ToolError("invalid_argument", "give a command line to run")
    if "\0" in cmd:
        raise ToolError("invalid_argument", "a command may not contain a NUL byte")
    return run_argv(cmd, cwd, timeout, shell=True)
