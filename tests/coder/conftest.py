"""Fixtures for the coder agent: temporary git repositories, and a workspace around one."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
sys.path.insert(0, str(HERE.parent / "fakes"))

from coder_repos import CALC, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", CALC)


@pytest.fixture
def workspace_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], object]:
    """Point the coder's code at a data folder and a granted folder, as the sandbox would."""

    def use(folder: Path, writable: bool = True):
        from dreamer.agents.coder.coder import workspace

        data = tmp_path / "data"
        data.mkdir(exist_ok=True)
        monkeypatch.setenv("DREAMER_DATA_DIR", str(data))
        monkeypatch.setenv("DREAMER_MOUNTS", json.dumps({str(folder): f"{'fs' if writable else 'fs.ro'}:{folder}"}))
        return workspace.current()

    return use
