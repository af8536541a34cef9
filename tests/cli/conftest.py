"""Fixtures for the CLI's unit tests: an isolated environment and a scripted kernel (see cli_scripted.py).

End-to-end tests against the real kernel live in tests/e2e.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from cli_scripted import ScriptedKernel, closed_port, handler
from typer.testing import CliRunner, Result

from dreamer.cli.main import app


@pytest.fixture
def scripted() -> Iterator[ScriptedKernel]:
    kernel = ScriptedKernel()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(kernel))
    kernel.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield kernel
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private DREAMER_HOME, no token in the environment, and a URL where nothing answers."""
    folder = tmp_path / "home"
    folder.mkdir()
    for name in ("DREAMER_TOKEN", "DREAMER_URL", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DREAMER_HOME", str(folder))
    monkeypatch.setenv("DREAMER_URL", f"http://127.0.0.1:{closed_port()}")
    return folder


@pytest.fixture
def cli(home: Path) -> Callable[..., Result]:
    runner = CliRunner()

    def run(*args: str, input: str | None = None) -> Result:
        return runner.invoke(app, list(args), input=input)

    return run


@pytest.fixture
def against(scripted: ScriptedKernel, monkeypatch: pytest.MonkeyPatch, home: Path) -> ScriptedKernel:
    """The scripted server as DREAMER_URL, with a token in $DREAMER_HOME/credentials."""
    monkeypatch.setenv("DREAMER_URL", scripted.url)
    (home / "credentials").write_text(json.dumps({"url": scripted.url, "user": "me", "token": "drm_from_file"}))
    return scripted
