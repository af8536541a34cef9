"""A kernel killed (SIGKILL) with background invocations queued and running starts
again without losing any: running ones get another attempt or fail by their retry
policy, queued ones run."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from bg_agents import WORKER, data_dir, wait_file, wait_status
from kernelproc import start_kernel, write_bundle


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_sigkill_with_queued_and_running_invocations(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    home = tmp_path / "home"
    env = {"DREAMER_RETRY_DELAY": "0.1", "DREAMER_BACKGROUND_PER_AGENT": "2"}
    if backend == "postgresql":
        env["DREAMER_DATABASE_URL"] = request.getfixturevalue("fresh_pg_url")
    k = start_kernel(home, env)
    try:
        assert k.cli("install", str(write_bundle(tmp_path, "worker", WORKER)), "--yes").returncode == 0
        data = data_dir(home, "worker")
        with k.client() as c:
            def call(function: str, key: str) -> str:
                return c.post(f"/v1/agents/worker/functions/{function}", json={"args": {"key": key}}).json()["invocation_id"]

            retried = call("hold", "a")  # retries=1: gets a second attempt
            lost = call("hold_once", "b")  # no retries: fails as interrupted
            wait_file(data / "started-a-1")
            wait_file(data / "started-b-1")
            queued = [call("hold", "c"), call("hold", "d")]  # the agent's two slots are taken
            assert {c.get(f"/v1/invocations/{i}").json()["status"] for i in queued} == {"queued"}
        k.stop(signal.SIGKILL)
    finally:
        k.stop()

    for key in "acd":
        (data / f"go-{key}").write_text("")
    k = start_kernel(home, env)
    try:
        with k.client() as c:
            again = wait_status(c, retried, {"succeeded", "failed"})
            assert again["status"] == "succeeded" and again["result"] == {"key": "a", "attempt": 2}
            assert any("the kernel stopped during attempt 1" in line["message"] for line in again["logs"])
            failed = c.get(f"/v1/invocations/{lost}").json()
            assert failed["status"] == "failed" and failed["error"]["code"] == "interrupted"
            assert "the last of 1" in failed["error"]["message"]
            for run_id in queued:
                run = wait_status(c, run_id, {"succeeded", "failed"})
                assert run["status"] == "succeeded" and run["attempt"] == 1
            # Every background invocation ever made is accounted for.
            everything = c.get("/v1/invocations", params={"agent": "worker"}).json()
            assert {r["id"]: r["status"] for r in everything} == {
                retried: "succeeded", lost: "failed", queued[0]: "succeeded", queued[1]: "succeeded",
            }
    finally:
        k.stop()
