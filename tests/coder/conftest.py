"""Fixtures for the coder agent: temporary git repositories, and a workspace around one."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
sys.path.insert(0, str(HERE.parent / "fakes"))


def make_repo(root: Path, files: dict[str, str]) -> Path:
    """A git repository holding `files`, committed."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=root, check=True)
    return root


CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
}


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
