"""A background function's whole life through a real kernel: queued at once, run in its
sandbox, followed live, retried by its policy, cancelled, refused."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from bg_agents import WORKER, data_dir, wait_file, wait_status
from kernelproc import KernelProc, start_kernel, write_bundle


@pytest.fixture(scope="module")
def bg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    root = tmp_path_factory.mktemp("bg")
    k = start_kernel(root / "home", {"DREAMER_RETRY_DELAY": "0.1", "DREAMER_MAX_QUEUED_PER_AGENT": "3"})
    done = k.cli("install", str(write_bundle(root, "worker", WORKER)), "--yes")
    assert done.returncode == 0, done.stderr + done.stdout
    yield k
    k.stop()


def test_a_background_call_answers_queued_and_runs_on(bg: KernelProc) -> None:
    out = bg.cli_json("call", "worker", "chatty", '{"lines": 3}')
    assert out["status"] == "queued" and out["result"] is None
    run_id = out["invocation_id"]
    # `dreamer logs --run` follows the run until it ends, then prints the whole record.
    followed = bg.cli("logs", "--run", run_id)
    assert followed.returncode == 0, followed.stderr
    assert [line for line in followed.stdout.splitlines() if "line " in line][:3] == [
        line for line in followed.stdout.splitlines() if "line " in line
    ] and "line 2" in followed.stdout
    assert "succeeded" in followed.stdout
    run = bg.cli_json("logs", "--run", run_id)
    assert run["status"] == "succeeded" and run["background"] is True
    assert run["result"] == {"attempt": 1, "id": run_id}  # ctx.invocation_id and ctx.attempt
    assert [line["message"] for line in run["logs"] if line["stream"] == "log"] == ["line 0", "line 1", "line 2"]
    assert run["created_at"] <= run["started_at"] <= run["finished_at"]


def test_the_log_stream_ends_with_the_outcome(bg: KernelProc) -> None:
    with bg.client() as c:
        run_id = c.post("/v1/agents/worker/functions/chatty", json={"args": {"lines": 2}}).json()["invocation_id"]
        events = []
        with c.stream("GET", f"/v1/invocations/{run_id}/logs") as response:
            name = None
            for line in response.iter_lines():
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    events.append((name, json.loads(line[5:])))
    assert [d["message"] for n, d in events if n == "log" and d["stream"] == "log"] == ["line 0", "line 1"]
    assert events[-1][0] == "end" and events[-1][1]["status"] == "succeeded"


def test_a_failed_attempt_is_retried_by_the_policy(bg: KernelProc) -> None:
    with bg.client() as c:
        once = c.post("/v1/agents/worker/functions/flaky", json={"args": {"fail_times": 1}}).json()["invocation_id"]
        never = c.post("/v1/agents/worker/functions/flaky", json={"args": {"fail_times": 9}}).json()["invocation_id"]
        ok = wait_status(c, once, {"succeeded", "failed"})
        assert ok["status"] == "succeeded" and ok["result"] == {"attempt": 2} and ok["attempt"] == 2
        bad = wait_status(c, never, {"succeeded", "failed"})
        # retries=2: three attempts, then the last error stays on the record.
        assert bad["status"] == "failed" and bad["attempt"] == 3 == bad["max_attempts"]
        assert bad["error"]["code"] == "agent_error" and "attempt 3 fails on purpose" in bad["error"]["message"]
        assert [line["message"] for line in bad["logs"] if line["stream"] == "log"] == ["attempt 1", "attempt 2", "attempt 3"]


def test_a_refusal_is_not_retried(bg: KernelProc) -> None:
    with bg.client() as c:
        run_id = c.post("/v1/agents/worker/functions/refuses", json={"args": {}}).json()["invocation_id"]
        run = wait_status(c, run_id, {"succeeded", "failed"})
    assert run["status"] == "failed" and run["error"]["code"] == "permission_denied" and run["attempt"] == 1


def test_cancel_a_running_and_a_queued_invocation(bg: KernelProc) -> None:
    data = data_dir(bg.home, "worker")
    with bg.client() as c:
        running = c.post("/v1/agents/worker/functions/hold_once", json={"args": {"key": "c1"}}).json()["invocation_id"]
        wait_file(data / "started-c1-1")
        assert wait_status(c, running, {"running"})["status"] == "running"
        cancelled = bg.cli_json("cancel", running)
        assert cancelled == {"id": running, "status": "cancelled", "was": "running"}
        run = c.get(f"/v1/invocations/{running}").json()
        assert run["status"] == "cancelled" and run["error"]["code"] == "cancelled"
        # Its worker was stopped: letting it go now changes nothing.
        (data / "go-c1").write_text("")
        assert c.get(f"/v1/invocations/{running}").json()["status"] == "cancelled"
        again = bg.cli("cancel", running, "--json")
        assert again.returncode != 0 and json.loads(again.stdout)["error"]["code"] == "conflict"
        # A direct call cannot be cancelled; an unknown id is not found.
        direct = bg.cli_json("call", "worker", "now")
        assert direct["result"] == "direct"
        refused = c.post(f"/v1/invocations/{direct['invocation_id']}/cancel")
        assert refused.status_code == 409 and "only background" in refused.json()["error"]["message"]
        assert c.post("/v1/invocations/inv_nope/cancel").status_code == 404
        # The agent still works after its worker was killed.
        after = c.post("/v1/agents/worker/functions/chatty", json={"args": {"lines": 1}}).json()["invocation_id"]
        assert wait_status(c, after, {"succeeded", "failed"})["status"] == "succeeded"


def test_limits_keep_extra_invocations_queued_and_cancel_one_in_the_queue(bg: KernelProc) -> None:
    """Two run at once per agent (the default); a third waits in the queue and can be cancelled there."""
    data = data_dir(bg.home, "worker")
    with bg.client() as c:
        ids = [
            c.post("/v1/agents/worker/functions/hold", json={"args": {"key": f"q{i}"}}).json()["invocation_id"]
            for i in range(3)
        ]
        wait_file(data / "started-q0-1")
        wait_file(data / "started-q1-1")
        assert c.get(f"/v1/invocations/{ids[2]}").json()["status"] == "queued"
        assert bg.cli_json("cancel", ids[2])["was"] == "queued"
        for i in range(3):
            (data / f"go-q{i}").write_text("")
        assert [wait_status(c, i, {"succeeded", "failed", "cancelled"})["status"] for i in ids] == [
            "succeeded", "succeeded", "cancelled",
        ]
        assert not (data / "started-q2-1").exists()


def test_the_queue_of_one_agent_is_capped(bg: KernelProc) -> None:
    """A leaked webhook or a runaway agent cannot grow the queue without end."""
    data = data_dir(bg.home, "worker")
    with bg.client() as c:
        def hold(key: str) -> httpx.Response:
            return c.post("/v1/agents/worker/functions/hold", json={"args": {"key": key}})

        running = [hold(f"cap{i}").json()["invocation_id"] for i in range(2)]
        wait_file(data / "started-cap0-1")
        wait_file(data / "started-cap1-1")
        waiting = [hold(f"wait{i}").json()["invocation_id"] for i in range(3)]
        refused = hold("one-too-many")
        assert refused.status_code == 409 and "already has 3 invocations waiting" in refused.json()["error"]["message"]
        for key in ("cap0", "cap1", "wait0", "wait1", "wait2"):
            (data / f"go-{key}").write_text("")
        assert {wait_status(c, i, {"succeeded", "failed"})["status"] for i in running + waiting} == {"succeeded"}
