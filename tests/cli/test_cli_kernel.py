"""`dreamer up` / `dreamer down` around real processes, and the interactive [y/N] on a real terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_scripted import DREAMER, ScriptedKernel, closed_port
from typer.testing import Result


@pytest.fixture
def spawned() -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []

    def spawn(*argv: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(list(argv))
        procs.append(proc)
        return proc

    yield spawn
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_up_when_a_kernel_already_answers(cli: Callable[..., Result], scripted: ScriptedKernel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMER_URL", scripted.url)
    scripted.on("GET", "/healthz", (200, {"ok": True, "version": "0.1.0"}))
    done = cli("up", "--detach", "--json")
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["already_running"] is True and answer["url"] == scripted.url
    # The port came from DREAMER_URL, so the probe went to the scripted server.
    assert [s.path for s in scripted.seen] == ["/healthz"]
    assert "already answers" in cli("up").stdout


def test_up_refuses_a_port_held_by_something_else(cli: Callable[..., Result], scripted: ScriptedKernel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMER_URL", scripted.url)
    done = cli("up", "--detach", "--json")
    assert done.exit_code == 1
    assert json.loads(done.stdout)["error"]["code"] == "port_in_use"


def test_up_detach_reports_a_kernel_that_dies_at_start(home: Path) -> None:
    port = closed_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMER_")}
    # A database nobody serves: the kernel exits during startup.
    env |= {"DREAMER_HOME": str(home), "DREAMER_URL": f"http://127.0.0.1:{port}",
            "DREAMER_DATABASE_URL": f"postgresql://nobody@127.0.0.1:{closed_port()}/none"}
    done = subprocess.run([DREAMER, "up", "--detach", "--json"], env=env, capture_output=True, text=True, timeout=90)
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "kernel_failed" and "kernel.log" in error["message"]
    assert "last lines of" in done.stderr
    assert (home / "kernel.log").stat().st_size > 0


def test_down_without_a_kernel(cli: Callable[..., Result], home: Path) -> None:
    done = cli("down")
    assert done.exit_code == 0 and "No kernel is running." in done.stdout
    (home / "kernel.pid").write_text("999999999\n")
    done = cli("down", "--json")
    assert json.loads(done.stdout) == {"stopped": None}
    assert not (home / "kernel.pid").exists()


def test_down_stops_the_process_in_the_pid_file(
    cli: Callable[..., Result], home: Path, spawned: Callable[..., subprocess.Popen[bytes]]
) -> None:
    proc = spawned(sys.executable, "-c", "import time  # stands in for the dreamer kernel\ntime.sleep(120)")
    (home / "kernel.pid").write_text(f"{proc.pid}\n")
    done = cli("down")
    assert done.exit_code == 0, done.output
    assert f"pid {proc.pid}" in done.stdout
    assert proc.wait(timeout=10) == -15  # SIGTERM, not SIGKILL
    assert not (home / "kernel.pid").exists()


def test_down_leaves_an_unrelated_process_alone(
    cli: Callable[..., Result], home: Path, spawned: Callable[..., subprocess.Popen[bytes]]
) -> None:
    proc = spawned("sleep", "120")
    (home / "kernel.pid").write_text(str(proc.pid))
    done = cli("down")
    assert "No kernel is running." in done.stdout
    assert proc.poll() is None


STAGED = {
    "bundle_id": "stg_1",
    "manifest": {"name": "asker", "version": "1.0.0", "publisher": "tests", "title": "Asker", "description": "d",
                 "permissions": {"required": ["notify"], "optional": []}},
    "functions": [{"name": "ping"}],
    "review": {"scopes": [{"scope": "notify", "sentence": "Post messages to your feed", "risk": "low", "required": True}]},
    "upgrade": None,
}


def _install_on_a_terminal(home: Path, url: str, bundle: Path, answer: bytes) -> tuple[int, str]:
    """Run `dreamer install` with a pseudo-terminal as stdin and type an answer."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMER_")}
    env |= {"DREAMER_HOME": str(home), "DREAMER_URL": url, "DREAMER_TOKEN": "drm_t"}
    try:
        proc = subprocess.Popen([DREAMER, "install", str(bundle)], stdin=slave, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
        os.write(master, answer)
        _, err = proc.communicate(timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    return proc.returncode, err.decode()


@pytest.mark.parametrize(("answer", "installs"), [(b"y\n", True), (b"n\n", False), (b"\n", False)])
def test_install_asks_on_a_terminal(home: Path, scripted: ScriptedKernel, tmp_path: Path, answer: bytes, installs: bool) -> None:
    bundle = tmp_path / "asker"
    bundle.mkdir()
    (bundle / "agent.yaml").write_text("name: asker\n")
    scripted.on("POST", "/v1/bundles", (201, STAGED))
    scripted.on("POST", "/v1/agents", (201, {"name": "asker", "version": "1.0.0", "functions": [], "grants": ["notify"]}))
    code, err = _install_on_a_terminal(home, scripted.url, bundle, answer)
    assert "Install asker and grant these permissions? [y/N]" in err
    assert bool(scripted.requests("POST", "/v1/agents")) is installs
    assert code == (0 if installs else 1)
    if not installs:
        assert "Cancelled" in err
