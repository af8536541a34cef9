"""Per-agent limits within the installation's ceilings, fork bombs and floods of output,
through a real kernel started with DREAMER_LIMIT_* ceilings."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from dreamer.contracts.archive import pack
from dreamer.kernel.workers.connection import LINE_COST_BYTES
from kernelproc import KernelProc, start_kernel, write_bundle

CEILING = {"DREAMER_LIMIT_MEMORY_MB": "1024", "DREAMER_LIMIT_PROCESSES": "48", "DREAMER_CALL_TIMEOUT": "20"}
MAX_LOG_BYTES = 1024 * 1024  # the kernel's default

CODE = '''
import os, resource, sys, time
from dreamer.sdk import Context, function

@function(exported=True)
def rlimits(ctx: Context) -> dict:
    """The limits this worker runs under."""
    return {
        "memory_mb": resource.getrlimit(resource.RLIMIT_AS)[0] // (1024 * 1024),
        "open_files": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
    }

@function
def bomb(ctx: Context, attempts: int = 300) -> dict:
    """Forks as often as it may (bounded), with every child alive at once."""
    r, w = os.pipe()
    made = failed = 0
    children = []
    for _ in range(attempts):
        try:
            pid = os.fork()
        except OSError:
            failed += 1
            continue
        if pid == 0:
            os.close(w)
            os.read(r, 1)
            os._exit(0)
        made += 1
        children.append(pid)
    os.close(w)
    for pid in children:
        os.waitpid(pid, 0)
    return {"made": made, "failed": failed}

@function(exported=True)
def nap(ctx: Context, seconds: float) -> str:
    """Sleeps."""
    time.sleep(seconds)
    return "rested"

@function
def relay(ctx: Context, callee: str, seconds: float) -> str:
    """Asks another agent to nap."""
    return ctx.call(callee, "nap", seconds=seconds)

@function
def loud(ctx: Context, megabytes: int = 20, empty_lines: int = 200000) -> str:
    """Floods stdout and stderr, then answers."""
    sys.stderr.write("\\n" * empty_lines)
    line = "x" * 1023 + "\\n"
    for _ in range(megabytes * 1024):
        sys.stdout.write(line)
    sys.stdout.flush()
    sys.stderr.write("y" * (megabytes * 1024 * 1024) + "\\n")
    sys.stderr.flush()
    return "done"
'''


def _with_limits(folder: Path, limits: dict[str, object]) -> Path:
    manifest = folder / "agent.yaml"
    lines = ["limits:", *(f"  {name}: {value}" for name, value in limits.items())]
    manifest.write_text(manifest.read_text() + "\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProc, dict[str, str]]]:
    root = tmp_path_factory.mktemp("limits")
    kernel = start_kernel(root / "home", extra_env=CEILING)
    reviews: dict[str, str] = {}
    try:
        bundles = {
            "modest": _with_limits(
                write_bundle(root, "modest", CODE), {"memory_mb": 512, "processes": 16}
            ),
            "hasty": _with_limits(write_bundle(root, "hasty", CODE), {"call_timeout_s": 1.5}),
            "greedy": _with_limits(
                write_bundle(root, "greedy", CODE), {"memory_mb": 1000000, "processes": 100000, "open_files": 64}
            ),
            "plain": write_bundle(root, "plain", CODE, required=["agent:hasty.nap"]),
        }
        for name, folder in bundles.items():
            shown = kernel.cli("install", str(folder))  # no --yes, no terminal: only the review
            reviews[name] = shown.stdout + shown.stderr
            done = kernel.cli("install", str(folder), "--yes")
            assert done.returncode == 0, done.stderr + done.stdout
        yield kernel, reviews
    finally:
        kernel.stop()


def _answer(kernel: KernelProc, agent: str, function: str, **args: object) -> tuple[int, dict]:
    with kernel.client() as client:
        response = client.post(f"/v1/agents/{agent}/functions/{function}", json={"args": args}, timeout=120)
    return response.status_code, response.json()


def _call(kernel: KernelProc, agent: str, function: str, **args: object) -> object:
    status, body = _answer(kernel, agent, function, **args)
    assert status == 200, body
    return body["result"]


def test_an_agent_asking_for_less_gets_less(limited: tuple[KernelProc, dict[str, str]]) -> None:
    kernel, _ = limited
    assert _call(kernel, "modest", "rlimits")["memory_mb"] == 512
    bombed = _call(kernel, "modest", "bomb")
    assert 0 < bombed["made"] < 16 and bombed["failed"] > 0


def test_an_agent_asking_for_more_gets_the_ceiling(limited: tuple[KernelProc, dict[str, str]]) -> None:
    kernel, _ = limited
    assert _call(kernel, "greedy", "rlimits") == {"memory_mb": 1024, "open_files": 64}
    bombed = _call(kernel, "greedy", "bomb")
    # More than `modest` may have (its own ask counts), never more than the installation's 48.
    assert 16 <= bombed["made"] < 48 and bombed["failed"] > 0


def test_an_agent_that_asks_nothing_runs_at_the_ceiling_and_survives_the_bombs(
    limited: tuple[KernelProc, dict[str, str]],
) -> None:
    kernel, _ = limited
    _call(kernel, "greedy", "bomb")
    assert _call(kernel, "plain", "rlimits")["memory_mb"] == 1024
    with kernel.client() as client:
        assert client.get("/healthz").status_code == 200


def test_the_review_shows_what_an_agent_asks_for(limited: tuple[KernelProc, dict[str, str]]) -> None:
    _, reviews = limited
    assert "asks for 1000000; this installation allows at most 1024" in reviews["greedy"]
    assert "processes 16" in reviews["modest"]
    assert "Limits" not in reviews["plain"]


def test_a_call_from_a_user_gets_the_agents_own_timeout(limited: tuple[KernelProc, dict[str, str]]) -> None:
    kernel, _ = limited
    status, body = _answer(kernel, "hasty", "nap", seconds=5)
    assert status >= 400
    assert body["error"]["code"] == "timeout"
    # The time left when the worker was asked, a hair under the agent's 1.5 s.
    assert re.search(r"within 1(\.\d+)? s", body["error"]["message"]), body["error"]["message"]


def test_a_nested_call_keeps_the_chains_deadline(limited: tuple[KernelProc, dict[str, str]]) -> None:
    """`hasty` alone may run 1.5 s; called by `plain` (20 s), it runs on the chain's time."""
    kernel, _ = limited
    assert _call(kernel, "plain", "relay", callee="hasty", seconds=2.5) == "rested"


def _peak_rss_kb(kernel: KernelProc) -> int:
    for line in Path(f"/proc/{kernel.process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc status")


def test_a_flood_of_output_is_capped_and_does_not_block(limited: tuple[KernelProc, dict[str, str]]) -> None:
    kernel, _ = limited
    before = _peak_rss_kb(kernel)
    status, body = _answer(kernel, "plain", "loud", megabytes=25, empty_lines=200000)
    assert status == 200, body
    assert body["result"] == "done"
    grown_mb = (_peak_rss_kb(kernel) - before) / 1024
    # 50 MB went through the pipes; the kernel holds at most a reader's buffer of it at a time.
    assert grown_mb < 64, f"the kernel's peak memory grew by {grown_mb:.0f} MB"
    with kernel.client() as client:
        logs = client.get(f"/v1/invocations/{body['invocation_id']}").json()["logs"]
    assert len(logs) <= MAX_LOG_BYTES // LINE_COST_BYTES + 2
    assert "the rest was dropped" in logs[-1]["message"]
    assert sum(len(line["message"]) for line in logs) <= MAX_LOG_BYTES
    # The worker is still usable afterwards.
    assert _call(kernel, "plain", "rlimits")["memory_mb"] == 1024


def test_the_review_data_has_every_limit(limited: tuple[KernelProc, dict[str, str]]) -> None:
    kernel, _ = limited
    archive = pack(Path(kernel.home).parent / "greedy")
    with kernel.client() as client:
        staged = client.post("/v1/bundles", content=archive, headers={"Content-Type": "application/gzip"}).json()
    rows = {row["name"]: row for row in staged["review"]["limits"]}
    assert rows["memory_mb"] == {"name": "memory_mb", "asked": 1000000, "granted": 1024, "ceiling": 1024}
    assert rows["open_files"]["asked"] == 64 and rows["open_files"]["granted"] == 64
    assert rows["cpu_seconds"]["asked"] is None
