"""Sidekick's planning processes end with the kernel, however the kernel ends: stopped, or
killed with no chance to clean up. Left behind, each would hold ~200 MB for good."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from kernelproc import start_kernel


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # pid (comm) state ppid ...: comm may hold spaces, so split after its closing bracket
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _planners(pid: int) -> set[int]:
    out = set()
    for child in _children(pid):
        try:
            if b"multiprocessing" in Path(f"/proc/{child}/cmdline").read_bytes():
                out.add(child)
        except OSError:
            pass
    return out


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


@pytest.mark.parametrize(("how", "warm"), [(signal.SIGTERM, "1"), (signal.SIGKILL, "0")])
def test_planning_processes_end_with_the_kernel(tmp_path: Path, how: int, warm: str) -> None:
    # DREAMER_SIDEKICK_WARM: "1" (the default) starts a planning process with the kernel, "0" with the first message.
    kernel = start_kernel(tmp_path / "home", {"DREAMER_SIDEKICK_WARM": warm}, wait_s=300)
    try:
        # Sidekick is built before the kernel answers, so a warm kernel's planning process has been started by now.
        assert bool(_planners(kernel.process.pid)) == (warm == "1")
        with kernel.client() as c:
            assert c.post("/v1/chat", json={"message": "add milk to my grocery list", "stream": False}).status_code == 200
        deadline = time.monotonic() + 60
        while not (planners := _planners(kernel.process.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert planners, "the kernel started no planning process"
        os.kill(kernel.process.pid, how)
        kernel.process.wait(30)
        deadline = time.monotonic() + 15
        while _alive(planners) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = {p: Path(f"/proc/{p}/cmdline").read_bytes()[:200] for p in _alive(planners)}
        assert not left, f"planning processes outlived the kernel ({signal.Signals(how).name}): {left}"
    finally:
        kernel.stop()
