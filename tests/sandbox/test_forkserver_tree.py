"""A forked worker is two processes and no monitor (decision 0050, "Later (2026-12-07, perf30)").

The zygote clones the worker's init straight into its new namespaces and waits for it itself.
What the monitor gave has to hold without it: the init is the zygote's child and pid 1 of the
worker's pid namespace; a kill reaches everything the worker started, even in a session of its
own; the kernel learns the worker's exit status; and nothing of the worker can see or signal
the zygote or another worker, not even with kill(-1).
"""

from __future__ import annotations

import asyncio
import os
import platform
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from sandbox_helpers import Layout, python_argv

from dreamer.kernel.config import Limits
from dreamer.kernel.sandbox import SandboxSpec
from dreamer.kernel.sandbox.forkserver import ForkServerSandbox
from dreamer.kernel.sandbox.forkserver.child import reaper
from dreamer.kernel.workers.procmem import process_memory

ENV = {"DREAMER_AGENT": "probe", "DREAMER_ENTRY": "main"}

# Starts a process in a session of its own (as a daemon would), says so, then waits.
DAEMON = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(600)
    os._exit(0)
os.wait()
print("started", flush=True)
sys.stdin.read()
"""

# kill(-1): every process this one may signal. In the worker's pid namespace that is its own.
KILL_ALL = """
import json, os, signal, sys
zygote = int(sys.argv[1])
try:
    os.kill(zygote, 0)
    seen = True
except ProcessLookupError:
    seen = False
ppid_of_init = [l.split()[1] for l in open("/proc/1/status") if l.startswith("PPid:")][0]
processes = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps({"zygote_seen": seen, "init_ppid": ppid_of_init, "processes": processes}), flush=True)
os.kill(-1, signal.SIGKILL)
"""


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


def _in_namespace(ns: str) -> list[int]:
    """Host pids of the processes in the pid namespace `ns` (a readlink of /proc/PID/ns/pid)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") == ns and _status(int(entry)).get("State", "")[:1] != "Z":
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_the_init_is_the_zygotes_child_and_pid_1_with_no_monitor(layout: Layout) -> None:
    sandbox = ForkServerSandbox()
    spec = SandboxSpec(layout.bundle, layout.data, ENV, Limits(), argv=python_argv("import sys; sys.stdin.read()"))

    async def scenario() -> None:
        process = await sandbox.start(spec)
        try:
            zygote = sandbox.zygote().process.pid
            init = _status(process.pid)
            assert int(init["PPid"]) == zygote  # nothing between the zygote and the init
            assert init["NSpid"].split()[1:] == ["1"]  # pid 1 of its own namespace
            ns = os.readlink(f"/proc/{process.pid}/ns/pid")
            assert ns != os.readlink(f"/proc/{zygote}/ns/pid")
            deadline = time.monotonic() + 30
            while len(_in_namespace(ns)) < 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert sorted(_in_namespace(ns)) == sorted([process.pid, *[
                int(p) for p in Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()]])
            assert len(_in_namespace(ns)) == 2  # the init and the worker: no monitor anywhere
            if reaper.program() is not None:
                # The init became the reaper: no copy of Python, a few pages of its own.
                assert os.readlink(f"/proc/{process.pid}/exe").startswith("/memfd:dreamer-init")
                memory = process_memory(process.pid)
                assert memory is not None and memory.uss_kb < 256
        finally:
            sandbox.kill(process)
            await process.wait()

    try:
        asyncio.run(scenario())
    finally:
        sandbox.close()


def test_a_kill_ends_everything_the_worker_started(layout: Layout) -> None:
    """Even a process in a session of its own, out of the init's process group."""
    sandbox = ForkServerSandbox()
    spec = SandboxSpec(layout.bundle, layout.data, ENV, Limits(), argv=python_argv(DAEMON))

    async def scenario() -> tuple[int, list[int]]:
        process = await sandbox.start(spec)
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), timeout=60)
        assert line.strip() == b"started"
        ns = os.readlink(f"/proc/{process.pid}/ns/pid")
        assert len(_in_namespace(ns)) == 3  # init, worker, the daemon
        sandbox.kill(process)
        status = await asyncio.wait_for(process.wait(), timeout=30)
        deadline = time.monotonic() + 10
        while _in_namespace(ns) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return status, _in_namespace(ns)

    try:
        status, left = asyncio.run(scenario())
    finally:
        sandbox.close()
    assert status == -signal.SIGKILL
    assert left == []


@pytest.mark.parametrize(("code", "expected"), [
    ("import sys; sys.exit(3)", 3),
    ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 128 + signal.SIGTERM),
])
def test_the_kernel_learns_the_workers_exit_status(layout: Layout, code: str, expected: int) -> None:
    """Reported by the zygote, which waits for the init, which reaps the worker (as bwrap: 128+N)."""
    sandbox = ForkServerSandbox()
    spec = SandboxSpec(layout.bundle, layout.data, ENV, Limits(), argv=python_argv(code))

    async def scenario() -> int:
        process = await sandbox.start(spec)
        await asyncio.wait_for(process.communicate(), timeout=60)
        return await process.wait()

    try:
        assert asyncio.run(scenario()) == expected
    finally:
        sandbox.close()


def test_a_worker_can_neither_see_nor_signal_the_zygote_or_another_worker(layout: Layout) -> None:
    sandbox = ForkServerSandbox()
    quiet = SandboxSpec(layout.bundle, layout.data, ENV, Limits(), argv=python_argv("import sys; sys.stdin.read()"))

    async def scenario() -> dict[str, object]:
        other = await sandbox.start(quiet)
        try:
            zygote = sandbox.zygote().process
            spec = SandboxSpec(layout.bundle, layout.data, ENV, Limits(),
                               argv=python_argv(KILL_ALL, [str(zygote.pid)]))
            hostile = await sandbox.start(spec)
            out, _ = await asyncio.wait_for(hostile.communicate(), timeout=60)
            await asyncio.sleep(0.2)
            assert zygote.poll() is None  # the zygote lives
            assert other.returncode is None  # and so does the other worker
            assert os.readlink(f"/proc/{other.pid}/ns/pid")  # still there, not a zombie
            assert _status(other.pid)["State"][:1] != "Z"
            import json

            return dict(json.loads(out.decode().strip().splitlines()[-1]))
        finally:
            sandbox.kill(other)
            await other.wait()

    try:
        seen = asyncio.run(scenario())
    finally:
        sandbox.close()
    assert seen["zygote_seen"] is False
    assert seen["init_ppid"] == "0"  # its parent, the zygote, is outside the namespace
    assert seen["processes"] == [1, 2]


def _listing() -> list[tuple[str, int, str]]:
    """reaper.py's listing: (bytes in hex, offset, [label:] instruction) per line."""
    text = Path(reaper.__file__).read_text().split("X86_64 = bytes.fromhex(", 1)[1].split("\n)", 1)[0]
    found = []
    for line in text.splitlines():
        match = re.match(r'\s*"([0-9a-f]+)"\s*#\s*([0-9a-f]{2}) (.*?)(?:\s{2,}.*)?$', line)
        if match:
            found.append((match[1], int(match[2], 16), match[3]))
    return found


def test_the_reapers_listing_accounts_for_every_byte() -> None:
    listing = _listing()
    assert "".join(code for code, _, _ in listing) == reaper.X86_64.hex()
    offset = 0
    for code, at, _ in listing:
        assert at == offset
        offset += len(code) // 2


@pytest.mark.skipif(shutil.which("as") is None or shutil.which("objcopy") is None, reason="needs binutils")
def test_the_reapers_bytes_are_the_instructions_listed_beside_them(tmp_path: Path) -> None:
    source = [".intel_syntax noprefix", ".globl _start", "_start:"]
    source += [f"    {instruction}" for _, _, instruction in _listing()]
    (tmp_path / "reaper.S").write_text("\n".join(source) + "\n")
    assembled = subprocess.run(["as", "--64", "-o", str(tmp_path / "reaper.o"), str(tmp_path / "reaper.S")],
                               capture_output=True, text=True)
    if assembled.returncode != 0 and platform.machine() != "x86_64":
        pytest.skip(f"no x86-64 assembler: {assembled.stderr.strip()}")
    assert assembled.returncode == 0, assembled.stderr
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(tmp_path / "reaper.o"), str(tmp_path / "reaper.bin")],
                   check=True)
    assert (tmp_path / "reaper.bin").read_bytes() == reaper.X86_64


@pytest.mark.skipif(reaper.program() is None, reason="no reaper program for this machine")
def test_the_reaper_with_no_child_exits_as_a_failed_setup(tmp_path: Path) -> None:
    program = reaper.program()
    assert program is not None
    path = tmp_path / "reaper"
    path.write_bytes(program)
    path.chmod(0o700)
    assert subprocess.run([str(path)], timeout=10).returncode == 70
