"""Choosing a backend, and the refusals a caller can run into."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest
from sandbox_helpers import Layout, make_spec, reported, run_code

from dreamer.kernel.config import Limits
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox import Sandbox, SandboxSpec, get_sandbox
from dreamer.kernel.sandbox.runtime import current_runtime


def test_known_names() -> None:
    assert get_sandbox("bwrap").name == "bwrap"
    assert get_sandbox("none").name == "none"


@pytest.mark.parametrize("name", ["docker-ish", "", "BWRAP", "None"])
def test_unknown_name_is_refused(name: str) -> None:
    with pytest.raises(DreamerError) as caught:
        get_sandbox(name)
    assert caught.value.code == "sandbox_unavailable"
    assert "bwrap" in caught.value.message and "none" in caught.value.message


def test_missing_bwrap_names_the_package_and_the_way_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A PATH where bubblewrap is not installed.
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DreamerError) as caught:
        get_sandbox("bwrap")
    assert caught.value.code == "sandbox_unavailable"
    assert caught.value.message == (
        "bubblewrap (bwrap) is not installed; install the Debian package bubblewrap, "
        "or set DREAMER_SANDBOX=none to run agents unconfined (unsafe)"
    )


def test_auto_prefers_bwrap_when_it_is_installed() -> None:
    assert get_sandbox("auto").name == "bwrap"


def test_auto_without_bwrap_or_an_engine_names_both_and_never_falls_back_to_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No bwrap and no docker client on PATH, and an engine address where nothing listens.
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/nothing.sock")
    with pytest.raises(DreamerError) as caught:
        get_sandbox("auto")
    assert caught.value.code == "sandbox_unavailable"
    message = caught.value.message
    assert "bubblewrap" in message and "docker" in message and "DREAMER_SANDBOX=none" in message
    assert "\n" not in message


def test_none_warns_on_every_start(layout: Layout, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="dreamer.sandbox")
    sandbox = get_sandbox("none")
    for _ in range(2):
        reported(run_code(sandbox, layout, "import json; print(json.dumps({'ok': True}))"))
    warnings = [r for r in caplog.records if r.name == "dreamer.sandbox" and r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert all("UNCONFINED" in r.getMessage() for r in warnings)


def test_bwrap_does_not_warn(layout: Layout, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="dreamer.sandbox")
    reported(run_code(get_sandbox("bwrap"), layout, "import json; print(json.dumps({'ok': True}))"))
    assert [r for r in caplog.records if r.name == "dreamer.sandbox"] == []


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"PYTHONPATH": "/evil"}, "set by the sandbox"),
        ({"DREAMER_DATA_DIR": "/"}, "set by the sandbox"),
        ({"BAD=NAME": "x"}, "not a valid environment name"),
        ({"": "x"}, "not a valid environment name"),
        ({"DREAMER_AGENT": "a\0b"}, "without NUL"),
    ],
)
def test_bad_extra_environment_is_refused(
    sandbox: Sandbox, layout: Layout, env: dict[str, str], fragment: str
) -> None:
    spec = make_spec(layout, "pass", env=env)
    with pytest.raises(DreamerError) as caught:
        asyncio.run(sandbox.start(spec))
    assert caught.value.code == "invalid_argument"
    assert fragment in caught.value.message


def test_missing_data_folder_is_one_sentence(sandbox: Sandbox, layout: Layout) -> None:
    spec = SandboxSpec(layout.bundle, layout.data / "absent", {}, Limits(), ["true"])
    with pytest.raises(DreamerError) as caught:
        asyncio.run(sandbox.start(spec))
    assert "does not exist" in caught.value.message


def test_missing_program_is_one_sentence(layout: Layout) -> None:
    spec = SandboxSpec(layout.bundle, layout.data, {}, Limits(), [str(layout.data / "no-such-python")])
    with pytest.raises(DreamerError) as caught:
        asyncio.run(get_sandbox("none").start(spec))
    assert caught.value.code == "sandbox_unavailable"
    assert "no-such-python" in caught.value.message


def test_bwrap_refuses_a_runtime_that_contains_dreamer_home(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    # An installation kept inside the interpreter's own folder would be bound into every sandbox.
    inside = current_runtime().roots[0] / "dreamer-home"
    monkeypatch.setenv("DREAMER_HOME", str(inside))
    with pytest.raises(DreamerError) as caught:
        asyncio.run(get_sandbox("bwrap").start(make_spec(layout, "pass")))
    assert caught.value.code == "sandbox_unavailable"
    assert str(inside) in caught.value.message


def test_probe_succeeds_on_every_backend(sandbox: Sandbox) -> None:
    asyncio.run(sandbox.probe())


def test_probe_explains_a_sandbox_that_cannot_start() -> None:
    # An address space too small for the interpreter: the probe must say so, not hang.
    with pytest.raises(DreamerError) as caught:
        asyncio.run(get_sandbox("bwrap").probe(Limits(address_space_mb=8)))
    assert caught.value.code == "sandbox_unavailable"
    assert caught.value.message.startswith("the bwrap sandbox cannot start a worker: ")


def test_runtime_describes_the_running_interpreter() -> None:
    runtime = current_runtime()
    assert runtime.python == sys.executable
    assert runtime.worker_argv() == [sys.executable, "-S", "-m", "dreamer.sdk.worker"]
    bound = [*runtime.roots, Path("/usr")]
    for needed in (sys.prefix, sys.base_prefix, *runtime.site_dirs, Path(sys.executable).resolve()):
        real = Path(needed).resolve()
        assert any(real.is_relative_to(root) for root in bound), f"{real} would be missing in the sandbox"
    # Bound folders never nest: each is bound once.
    assert not any(a != b and a.is_relative_to(b) for a in runtime.roots for b in runtime.roots)
    assert (runtime.sdk_dir / "__init__.py").is_file()
