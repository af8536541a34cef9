"""Finding 3 of issue 14 through a real kernel (bwrap): bob floods the queue from many
agents; my webhook, input, event and cron runs still start at once, and bob's flood
stops at his own queue quota with a clear refusal."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "background"))  # bg_agents

from bg_agents import SAVER, SAVER_YAML, SUMMARISER, SUMMARISER_YAML, WORKER, wait_status, write_agent
from kernelproc import KernelProc, start_kernel, write_bundle

SPAM_AGENTS = ("spam1", "spam2")
BOB_QUOTA = 120
# Two users with their starter agents, four more installs: slow on a busy machine.
pytestmark = pytest.mark.timeout(400)


@pytest.fixture(scope="module")
def flooded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProc, str, list[httpx.Response]]]:
    root = tmp_path_factory.mktemp("fair")
    k = start_kernel(root / "home", {
        "DREAMER_SANDBOX": "bwrap", "DREAMER_QUOTA_QUEUED": str(BOB_QUOTA), "DREAMER_MAX_QUEUED_PER_AGENT": "100",
    })
    try:
        for name, code, extra in (("saver", SAVER, SAVER_YAML), ("summariser", SUMMARISER, SUMMARISER_YAML)):
            done = k.cli("install", str(write_agent(root, name, code, extra, ["schedule", "notify"])), "--yes")
            assert done.returncode == 0, done.stderr + done.stdout
        bob = k.cli_json("users", "add", "bob")["token"]
        for name in SPAM_AGENTS:
            done = k.cli("install", str(write_bundle(root / "bob", name, WORKER)), "--yes", token=bob)
            assert done.returncode == 0, done.stderr + done.stdout
        yield k, bob, _flood(k, bob)
    finally:
        k.stop()


def _flood(k: KernelProc, bob: str) -> list[httpx.Response]:
    """Bob queues holds round his agents until the kernel refuses one."""
    answers = []
    with k.client(bob) as c:
        for i in range(BOB_QUOTA + 20):
            agent = SPAM_AGENTS[i % len(SPAM_AGENTS)]
            answers.append(c.post(f"/v1/agents/{agent}/functions/hold", json={"args": {"key": f"k{i}"}}))
            if answers[-1].status_code != 200:
                break
    return answers


def test_a_flood_stops_at_the_users_queue_quota(flooded: tuple[KernelProc, str, list[httpx.Response]]) -> None:
    _, _, answers = flooded
    refused = answers[-1]
    assert refused.status_code == 429, refused.text
    error = refused.json()["error"]
    assert error["code"] == "quota_exceeded"
    assert f"background invocations waiting to run, over its quota of {BOB_QUOTA}" in error["message"]
    assert "dreamer cancel" in error["message"]
    # Queued ones plus the few bob's limits let run: never more than the quota waits.
    assert BOB_QUOTA <= len(answers) - 1 <= BOB_QUOTA + 4


def test_my_triggers_run_while_bob_floods(flooded: tuple[KernelProc, str, list[httpx.Response]]) -> None:
    """Bob's agents are at their limits with a full queue older than any of my runs; each
    of my trigger kinds still starts and finishes at once."""
    k, bob, _ = flooded
    hook = next(t for t in k.cli_json("triggers", "saver") if t["type"] == "webhook")["path"]
    with httpx.Client(base_url=k.url, timeout=30) as anon:
        by_hook = anon.post(hook, json={"say": "hello"})
    assert by_hook.status_code == 202, by_hook.text
    by_input = k.cli_json("share", "remember the milk")["routed"][0]["invocation_id"]
    by_cron = k.cli_json("trigger", "run", "summariser", "morning")["invocation_id"]
    [by_event] = k.cli_json("call", "saver", "save", '{"title": "Dune"}')["result"]
    with k.client() as c:
        for run_id in (by_hook.json()["invocation_id"], by_input, by_cron, by_event):
            run = wait_status(c, run_id, {"succeeded", "failed"}, timeout=30)
            assert run["status"] == "succeeded", run
    # Bob's backlog is still there: his work waits, it was not dropped to make room.
    with k.client(bob) as c:
        statuses = [r["status"] for r in c.get("/v1/invocations", params={"limit": 500}).json()]
    assert statuses.count("queued") >= BOB_QUOTA - 10 and statuses.count("running") <= 4
