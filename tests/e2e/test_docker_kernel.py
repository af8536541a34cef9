"""A whole kernel on the docker backend: the starter agents install, call each other and
keep their data, every worker is a container of its own, and none outlives the kernel."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelproc import KernelProc, start_kernel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sandbox"))
from docker_engine import engine_unavailable

from dreamer.kernel.sandbox.docker import LABEL_AGENT, LABEL_OWNER, LABEL_USER, connect


@pytest.fixture(scope="module")
def docker_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    reason = engine_unavailable()
    if reason is not None:
        pytest.skip(reason)
    k = start_kernel(tmp_path_factory.mktemp("docker-home"), {"DREAMER_SANDBOX": "docker"})
    yield k
    k.stop()


def _kernel_containers(k: KernelProc) -> list[dict[str, str]]:
    """Labels of the containers this kernel process started."""
    client = connect()
    try:
        # Low-level listing: the high-level one fails on a container removed while it looks.
        found = [c.get("Labels") or {} for c in client.api.containers(all=True, filters={"label": LABEL_OWNER})]
        return [labels for labels in found if labels.get(LABEL_OWNER, "").startswith(f"{k.process.pid}.")]
    finally:
        client.close()


def test_starter_agents_work_in_containers(docker_kernel: KernelProc) -> None:
    k = docker_kernel
    k.cli_json("call", "grocery", "add_items", '{"items": ["oat milk"]}')
    planned = k.cli_json("call", "recipes", "plan_dinner")["result"]
    listed = json.dumps(k.cli_json("call", "grocery", "list_items")["result"])
    assert "oat milk" in listed
    # plan_dinner put its ingredients on the list through an agent-to-agent call.
    assert planned and any(word in listed for word in json.dumps(planned).split('"') if len(word) > 3)
    # The data lives on the host, in the user's folder for the agent.
    assert list((k.home / "users" / "me" / "agents" / "grocery" / "data").iterdir())
    # The warm workers are containers labelled with whose and which agent they are.
    workers = {(labels.get(LABEL_USER), labels.get(LABEL_AGENT)) for labels in _kernel_containers(k)}
    assert ("me", "grocery") in workers
    assert ("me", "recipes") in workers


def test_doctor_reports_docker_active(docker_kernel: KernelProc) -> None:
    report = docker_kernel.cli_json("doctor")
    assert report["sandbox"]["active"] == "docker"
    backends = {b["name"]: b for b in report["sandbox"]["backends"]}
    assert list(backends) == ["bwrap", "docker", "none"]
    assert backends["docker"] == {"name": "docker", "ok": True, "reason": "works"}
    assert report["store"]["backend"] == "sqlite"
    assert report["store"]["url"].endswith("kernel.db")
    human = docker_kernel.cli("doctor")
    assert human.returncode == 0, human.stderr
    assert "docker (active)" in human.stdout


def test_doctor_needs_the_administrator(docker_kernel: KernelProc) -> None:
    bob = docker_kernel.cli_json("users", "add", "bob")["token"]
    denied = docker_kernel.cli("doctor", "--json", token=bob)
    assert denied.returncode == 1
    assert json.loads(denied.stdout)["error"]["code"] == "forbidden"


def test_no_container_outlives_the_kernel(docker_kernel: KernelProc) -> None:
    """Last in this module: it stops the module's kernel (stopping again is harmless)."""
    k = docker_kernel
    k.cli_json("call", "grocery", "list_items")
    assert _kernel_containers(k), "the warm grocery worker should be a running container"
    k.stop()
    deadline = time.monotonic() + 20
    while (left := _kernel_containers(k)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == []
