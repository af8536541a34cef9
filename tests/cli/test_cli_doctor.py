"""`dreamer doctor` against a scripted kernel: what it shows, and when it exits 1.

The real probes run in tests/e2e/test_docker.py and tests/sandbox/test_docker.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from cli_scripted import ScriptedKernel
from typer.testing import Result


def report(active: str, docker_ok: bool) -> dict[str, Any]:
    reason = "works" if docker_ok else "no Docker engine answers at unix:///var/run/docker.sock; start dockerd or choose DREAMER_SANDBOX=bwrap"
    return {
        "sandbox": {
            "active": active,
            "backends": [
                {"name": "bwrap", "ok": True, "reason": "works"},
                {"name": "docker", "ok": docker_ok, "reason": reason},
                {"name": "none", "ok": True, "reason": "works, but runs agent code unconfined"},
            ],
        },
        "store": {"backend": "postgresql", "url": "postgresql://dreamer:***@db/dreamer"},
        "version": "0.1.0",
    }


def row(text: str, name: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.lstrip("│ ").startswith(name))
    return [cell.strip() for cell in line.split("│")[1:-1]]


def test_doctor_shows_each_backend_and_why(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("GET", "/v1/doctor", (200, report("bwrap", docker_ok=False)))
    done = cli("doctor")
    assert done.exit_code == 0, done.output
    assert row(done.stdout, "bwrap (active)")[:2] == ["bwrap (active)", "yes"]
    docker = row(done.stdout, "docker")
    assert docker[1] == "no" and "no Docker engine answers" in docker[2]
    assert "store: postgresql at postgresql://dreamer:***@db/dreamer" in done.stdout
    assert against.requests("GET", "/v1/doctor")


def test_doctor_json_is_the_kernels_report(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("GET", "/v1/doctor", (200, report("docker", docker_ok=True)))
    done = cli("doctor", "--json")
    assert done.exit_code == 0
    assert json.loads(done.stdout) == report("docker", docker_ok=True)


def test_doctor_exits_1_when_the_active_sandbox_is_broken(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("GET", "/v1/doctor", (200, report("docker", docker_ok=False)))
    done = cli("doctor")
    assert done.exit_code == 1
    assert "The active sandbox (docker) cannot start workers." in done.stderr
    as_json = cli("doctor", "--json")
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["sandbox"]["active"] == "docker"


def test_doctor_without_a_kernel_is_one_sentence(cli: Callable[..., Result]) -> None:
    done = cli("doctor")
    assert done.exit_code == 1
    assert "No dreamer kernel answers" in done.stderr
    assert "Traceback" not in done.output
