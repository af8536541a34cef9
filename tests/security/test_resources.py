"""Resource attacks end in a clear error for the attacker alone: fork bombs meet the
processes limit, memory the memory limit, files the file size limit, endless loops the
timeout, floods of output the log cap; the kernel keeps serving everyone else."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from dreamer.kernel.workers.connection import LINE_COST_BYTES
from security_world import LIMITS, World

MAX_LOG_BYTES = 1024 * 1024  # the kernel's default
BOMB_NAME = "dreamer-bomb"  # what the bomb's children call themselves (hostile_agents.spin)


def _bomb_processes() -> int:
    """Processes on the host that renamed themselves like the bomb's children."""
    count = 0
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == BOMB_NAME:
                count += 1
        except OSError:
            continue
    return count


def test_a_fork_bomb_meets_the_processes_limit(world: World) -> None:
    # 300 is far above the limit; a failed fork costs as much as a good one, so no more.
    with world.bystander_served():
        bombed = world.ok("bomb", attempts=300)
    assert 0 < bombed["made"] < LIMITS["processes"]
    assert bombed["failed"] > 0
    world.still_serving()


def test_a_fork_bomb_that_never_ends_is_stopped_whole(world: World) -> None:
    """A classic bomb (every child forks on and leaves the process group) under a parent
    that spins forever: the timeout stops the worker with every process it made."""
    outcome: dict[str, object] = {}
    call = threading.Thread(target=lambda: outcome.update(error=world.fail("spin", generations=11)))
    most = 0
    with world.bystander_served():
        call.start()
        while call.is_alive():
            most = max(most, _bomb_processes())
            time.sleep(0.1)
    error = outcome.get("error")
    assert isinstance(error, dict), "the endless call did not fail as a call"
    assert error["code"] == "timeout", error
    assert error["message"].startswith("hostile.spin did not finish within")
    assert 0 < most < LIMITS["processes"], f"{most} bomb processes ran at once"
    deadline = time.monotonic() + 20
    while _bomb_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _bomb_processes() == 0, "bomb processes outlived their worker"
    world.still_serving()


def test_an_endless_loop_is_stopped_at_the_timeout(world: World) -> None:
    with world.bystander_served():
        error = world.fail("spin")
    assert error["code"] == "timeout"
    assert error["message"].startswith("hostile.spin did not finish within")
    world.still_serving()


def test_ten_gigabytes_at_once_is_a_memory_error(world: World) -> None:
    error = world.fail("allocate", gb=10)
    assert error["code"] == "agent_error"
    assert "MemoryError" in error["message"]
    world.still_serving()


def test_memory_taken_page_by_page_stops_at_the_limit(world: World) -> None:
    error = world.fail("hog", gb=10)
    # The address-space limit raises MemoryError; a memory cgroup may kill the worker first.
    assert error["code"] in ("agent_error", "worker_crashed"), error
    if error["code"] == "agent_error":
        assert "MemoryError" in error["message"]
    world.still_serving()


@pytest.mark.parametrize(
    "attack, args",
    [
        # Three processes with 250 MB each, every one under the per-process limit of 512.
        ("hog_together", {"children": 3, "mb": 250}),
        # SysV shared memory, filled while attached and then detached: in no address space.
        ("shm_hog", {"segments": 2, "mb": 320}),
    ],
)
def test_memory_is_limited_for_the_whole_worker(world: World, attack: str, args: dict[str, int]) -> None:
    """The memory limit is what the worker holds, not what each of its processes maps."""
    status, body = world.answer("hostile", attack, args)
    if status == 200:
        assert body["result"]["held_mb"] <= LIMITS["memory_mb"], body
    else:
        # A memory cgroup's OOM killer may take the worker itself.
        assert body["error"]["code"] in ("worker_crashed", "agent_error"), body
    world.still_serving()


def test_a_five_gigabyte_file_stops_at_the_file_size_limit(world: World) -> None:
    big = world.data_dir("me", "hostile") / "big.bin"
    try:
        error = world.fail("big_file", gb=5)
        assert error["code"] == "agent_error"
        assert "File too large" in error["message"], error["message"]
        assert big.stat().st_size <= LIMITS["file_mb"] * 1024 * 1024
    finally:
        big.unlink(missing_ok=True)
    world.still_serving()


@pytest.mark.parametrize("folder", ["/tmp", "/dev/shm", "/dev", "/"])
def test_memory_backed_folders_cannot_hold_more_than_the_memory_limit(world: World, folder: str) -> None:
    """A tmpfs is RAM outside every per-process limit: an agent filling one (with files
    each under the file size limit) must be stopped before it holds the memory limit."""
    status, body = world.answer("hostile", "fill", {"folder": folder, "mb": 768})
    if status == 200:
        filled = body["result"]
        assert filled["written_mb"] < LIMITS["memory_mb"], filled
        assert filled["written_mb"] == 0 or filled["error"], filled
    else:
        # A memory cgroup (docker) may kill the worker instead.
        assert body["error"]["code"] == "worker_crashed", body
    world.still_serving()


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc status")


def test_fifty_megabytes_of_output_are_capped_and_the_call_answers(world: World) -> None:
    before = _peak_rss_kb(world.kernel.process.pid)
    with world.bystander_served():
        status, body = world.answer("hostile", "flood", {"mb": 25})
    assert status == 200, body
    assert body["result"] == "done"
    grown_mb = (_peak_rss_kb(world.kernel.process.pid) - before) / 1024
    assert grown_mb < 64, f"the kernel's peak memory grew by {grown_mb:.0f} MB"
    logs = world.invocation(body["invocation_id"])["logs"]
    assert len(logs) <= MAX_LOG_BYTES // LINE_COST_BYTES + 2
    assert sum(len(line["message"]) for line in logs) <= MAX_LOG_BYTES
    assert "the rest was dropped" in logs[-1]["message"]
    world.still_serving()
