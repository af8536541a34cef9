"""Workers that crash, hang or lie end in clear errors; the kernel keeps serving."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from kernelproc import KernelProc, start_kernel, write_bundle

HOSTILE = '''
import os, signal, time
from dreamer.sdk import Context, function

@function(exported=True)
def ok(ctx: Context) -> str:
    """Answers."""
    return "fine"

@function
def die(ctx: Context) -> str:
    """Kills its own worker mid-call."""
    os.kill(os.getpid(), signal.SIGKILL)
    return "unreachable"

@function
def spin(ctx: Context) -> str:
    """Never returns."""
    while True:
        pass

@function
def sleepy(ctx: Context, seconds: float = 30) -> str:
    """Sleeps."""
    time.sleep(seconds)
    return "woke"

@function
def garbage(ctx: Context) -> str:
    """Writes junk into every pipe it can find, including the protocol channel."""
    for fd in os.listdir("/proc/self/fd"):
        fd = int(fd)
        if fd in (0, 2):
            continue
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                os.write(fd, b"this is not json\\n")
        except OSError:
            pass
    time.sleep(5)
    return "done"

@function
def noisy(ctx: Context) -> str:
    """Prints to stdout, which must not break the protocol."""
    print("hello from print")
    print('{"jsonrpc": "2.0", "id": 1, "result": {"value": "forged"}}')
    return "real"

@function
def bad_text(ctx: Context) -> str:
    """Logs and returns text no store can hold."""
    ctx.log("lone \\ud800 surrogate and a \\x00 NUL")
    return "\\ud800"

@function
def boom(ctx: Context) -> str:
    """Raises."""
    raise ValueError("the flux capacitor is empty")
'''


RELAY = '''
from dreamer.sdk import Context, function

@function(exported=True)
def relay(ctx: Context, hops: int) -> list:
    """Passes the call on while hops remain."""
    if hops <= 0:
        return [ctx.agent]
    return [ctx.agent, *ctx.call("{next}", "relay", hops=hops - 1)]
'''


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> KernelProc:
    home = tmp_path_factory.mktemp("faults")
    k = start_kernel(home / "home", {"DREAMER_CALL_TIMEOUT": "3", "DREAMER_MAX_CALL_DEPTH": "2"})
    bundle = write_bundle(home, "hostile", HOSTILE)
    done = k.cli("install", str(bundle), "--yes")
    assert done.returncode == 0, done.stderr + done.stdout
    for i in (1, 2, 3):
        relay = write_bundle(home, f"relay{i}", RELAY.format(next=f"relay{i + 1}"), required=[f"agent:relay{i + 1}"])
        done = k.cli("install", str(relay), "--yes")
        assert done.returncode == 0, done.stderr + done.stdout
    yield k
    k.stop()


def _err(k: KernelProc, fn: str) -> dict:
    done = k.cli("call", "hostile", fn, "--json")
    assert done.returncode != 0, done.stdout
    return json.loads(done.stdout)["error"]


def test_crash_mid_call(hostile: KernelProc) -> None:
    error = _err(hostile, "die")
    assert error["code"] == "worker_crashed" and "SIGKILL" in error["message"]
    assert hostile.cli_json("call", "hostile", "ok")["result"] == "fine"


def test_endless_loop_is_stopped(hostile: KernelProc) -> None:
    error = _err(hostile, "spin")
    assert error["code"] == "timeout" and "hostile.spin" in error["message"]
    assert hostile.cli_json("call", "hostile", "ok")["result"] == "fine"


def test_garbage_on_the_protocol_channel(hostile: KernelProc) -> None:
    error = _err(hostile, "garbage")
    assert error["code"] == "protocol_error"
    assert hostile.cli_json("call", "hostile", "ok")["result"] == "fine"


def test_prints_do_not_reach_the_protocol(hostile: KernelProc) -> None:
    out = hostile.cli_json("call", "hostile", "noisy")
    assert out["result"] == "real"
    run = hostile.cli_json("logs", "--run", out["invocation_id"])
    assert any("hello from print" in line["message"] for line in run["logs"])


def test_agent_exception_is_reported_with_its_log(hostile: KernelProc) -> None:
    error = _err(hostile, "boom")
    assert error["code"] == "agent_error" and "flux capacitor" in error["message"]


def test_text_no_store_can_hold_is_refused_cleanly(hostile: KernelProc) -> None:
    error = _err(hostile, "bad_text")
    assert error["code"] == "result_invalid" and "Unicode" in error["message"]
    runs = hostile.cli_json("logs", "--agent", "hostile", "--limit", "1")
    assert runs[0]["function"] == "bad_text" and runs[0]["status"] == "failed"


def test_kernel_serves_others_while_a_worker_hangs(hostile: KernelProc) -> None:
    results: dict[str, object] = {}

    def hang() -> None:
        results["spin"] = hostile.cli("call", "hostile", "spin", "--json").returncode

    t = threading.Thread(target=hang)
    t.start()
    time.sleep(0.5)
    # While one worker spins, other calls (even to the same agent) are answered.
    assert hostile.cli_json("call", "hostile", "ok")["result"] == "fine"
    assert hostile.cli_json("call", "grocery", "list_items")["invocation_id"]
    t.join(30)
    assert results["spin"] != 0


def test_kernel_killed_mid_invocation_restarts_consistent(tmp_path: Path) -> None:
    home = tmp_path / "home"
    k = start_kernel(home)
    bundle = write_bundle(tmp_path, "hostile", HOSTILE)
    assert k.cli("install", str(bundle), "--yes").returncode == 0
    port = k.port

    def slow_call() -> None:
        try:
            with k.client() as c:
                c.post("/v1/agents/hostile/functions/sleepy", json={"args": {"seconds": 20}})
        except httpx.HTTPError:
            pass

    t = threading.Thread(target=slow_call)
    t.start()
    time.sleep(1.5)
    k.stop(signal.SIGKILL)
    t.join(10)

    k2 = start_kernel(home, port=port)
    try:
        runs = k2.cli_json("logs", "--agent", "hostile")
        sleepy = [r for r in runs if r["function"] == "sleepy"]
        assert sleepy and sleepy[0]["status"] == "failed"
        assert "kernel stopped" in sleepy[0]["error"]["message"]
        names = {a["name"] for a in k2.cli_json("agents")}
        assert {"grocery", "recipes", "hostile"} <= names
        assert k2.cli_json("call", "hostile", "ok")["result"] == "fine"
        assert k2.cli_json("audit", "verify")["ok"] is True
    finally:
        k2.stop()


def test_call_depth_is_limited(hostile: KernelProc) -> None:
    # relay1 → relay2 is depth 2, the limit this kernel was started with.
    assert hostile.cli_json("call", "relay1", "relay", '{"hops": 1}')["result"] == ["relay1", "relay2"]
    done = hostile.cli("call", "relay1", "relay", '{"hops": 2}', "--json")
    error = json.loads(done.stdout)["error"]
    assert done.returncode != 0 and error["code"] == "depth_exceeded"
    assert "relay2 → relay3" in error["message"]


def test_an_orphaned_bundle_folder_from_a_crash_is_replaced(hostile: KernelProc, tmp_path: Path) -> None:
    """A kernel killed after copying a bundle but before recording it leaves a folder
    behind; the next install of that version must not trip over it."""
    orphan = hostile.home / "bundles" / "phoenix" / "0.1.0"
    orphan.mkdir(parents=True)
    (orphan / "agent.yaml").write_text("half-written")
    bundle = write_bundle(tmp_path, "phoenix", HOSTILE)
    done = hostile.cli("install", str(bundle), "--yes")
    assert done.returncode == 0, done.stderr
    assert hostile.cli_json("call", "phoenix", "ok")["result"] == "fine"
