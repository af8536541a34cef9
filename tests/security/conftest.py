"""The hostile-agent suite: a real kernel per sandbox backend, attacked by a real agent.

One kernel per backend serves the whole suite (not one per module): the last module,
test_aftermath.py, checks what every attack before it left behind (the victim's data,
the audit chain, the bystander's answers), so it must see them all; and a docker
kernel with its users and agents takes half a minute to set up.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS / "e2e"))  # kernelproc
sys.path.insert(0, str(TESTS / "sandbox"))  # docker_engine

from docker_engine import engine_unavailable  # noqa: E402
from kernelproc import KernelProc, start_kernel  # noqa: E402
from security_world import World, build_world  # noqa: E402

from dreamer.contracts.errors import DreamerError  # noqa: E402
from dreamer.kernel.sandbox.select import get_sandbox  # noqa: E402

BACKENDS = ["bwrap", "docker", "forkserver"]
AFTERMATH = "test_aftermath.py"


def backend_unavailable(name: str) -> str | None:
    """Why `name` cannot run workers here, or None when it can."""
    if name == "docker":
        reason = engine_unavailable()  # starts dockerd when it is installed but not running
        if reason is not None:
            return reason
    try:
        sandbox = get_sandbox(name)
    except DreamerError as error:
        return f"the {name} sandbox is not available here: {error.message}"
    close = getattr(sandbox, "close", None)
    if close is not None:
        close()
    return None


@pytest.fixture(scope="session", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    backend: str = request.param
    reason = backend_unavailable(backend)
    if reason is not None:
        pytest.skip(reason)
    built = build_world(backend, tmp_path_factory.mktemp(f"security-{backend}"))
    yield built
    built.bystander.stop()
    built.kernel.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The aftermath checks run after every attack of this folder (pytest then groups the
    items by backend, keeping this order within each group)."""
    here = Path(__file__).resolve().parent
    last = [item for item in items if Path(item.path).resolve() == here / AFTERMATH]
    rest = [item for item in items if Path(item.path).resolve() != here / AFTERMATH]
    attacks = [i for i, item in enumerate(rest) if Path(item.path).resolve().parent == here]
    if last and attacks:
        items[:] = rest[: attacks[-1] + 1] + last + rest[attacks[-1] + 1 :]


@pytest.fixture(scope="session")
def accounts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProc, str]]:
    """One real kernel (bwrap) with two ordinary accounts: `me` (the first, local user) and bob,
    an attacker with an ordinary account. Yields the kernel and bob's token."""
    # A first start installs every starter; on a busy shared machine that can pass a minute.
    kernel = start_kernel(tmp_path_factory.mktemp("accounts") / "home", wait_s=240)
    try:
        bob = kernel.cli_json("users", "add", "bob")
        assert isinstance(bob, dict)
        yield kernel, str(bob["token"])
    finally:
        kernel.stop()
