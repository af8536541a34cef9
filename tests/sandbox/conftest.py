"""Fixtures for the sandbox tests: a fake $DREAMER_HOME and the backends to run in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from docker_engine import engine_unavailable
from sandbox_helpers import Layout

from dreamer.kernel.sandbox import Sandbox, get_sandbox
from dreamer.kernel.sandbox.docker import DockerSandbox

BACKENDS = ["bwrap", "docker", "forkserver", "none"]
# The backends that confine: every isolation test runs on each of them.
CONFINING = ["bwrap", "docker", "forkserver"]


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    """An installation laid out as the kernel lays it out, with things agents must not see."""
    home = tmp_path / "dreamer-home"
    bundle = home / "bundles" / "probe" / "1.0.0"
    bundle.mkdir(parents=True)
    (bundle / "agent.yaml").write_text("name: probe\nversion: 1.0.0\n")
    data = home / "users" / "me" / "agents" / "probe" / "data"
    data.mkdir(parents=True)
    kernel_db = home / "kernel.db"
    kernel_db.write_bytes(b"SQLite format 3\x00 not really")
    secret = home / "users" / "me" / "agents" / "other" / "data" / "secret.txt"
    secret.parent.mkdir(parents=True)
    secret.write_text("another agent's data")
    monkeypatch.setenv("DREAMER_HOME", str(home))
    return Layout(home=home, bundle=bundle, data=data, kernel_db=kernel_db, other_agent_secret=secret)


def _backend(request: pytest.FixtureRequest, name: str) -> Sandbox:
    if name == "docker":
        return request.getfixturevalue("docker_sandbox")
    return get_sandbox(name)


@pytest.fixture(params=BACKENDS)
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    return _backend(request, request.param)


@pytest.fixture(params=CONFINING)
def confined(request: pytest.FixtureRequest) -> Sandbox:
    return _backend(request, request.param)


@pytest.fixture(scope="session")
def docker_sandbox() -> Iterator[DockerSandbox]:
    """One docker backend for the session (its image and engine connection are shared)."""
    reason = engine_unavailable()
    if reason is not None:
        pytest.skip(reason)
    sandbox = get_sandbox("docker")
    assert isinstance(sandbox, DockerSandbox)
    yield sandbox
    sandbox.close()


# The backends that bind granted folders at /mnt/<name> the way bwrap does (the fork server
# carries out bwrap's own plan); test_mounts.py's "what a bwrap worker sees" runs on each.
BWRAP_LIKE = ["bwrap", "forkserver"]


@pytest.fixture(params=BWRAP_LIKE)
def bwrap(request: pytest.FixtureRequest) -> Sandbox:
    return get_sandbox(request.param)
