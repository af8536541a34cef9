"""Fixtures for the bundle tests: bundle folders on disk and a refusal checker."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bundle_tarcraft import MANIFEST
from dreamer.contracts.archive import BundleLimits, extract
from dreamer.contracts.errors import DreamerError


@pytest.fixture
def make_bundle(tmp_path: Path) -> Callable[..., Path]:
    """Write a small bundle folder and return it."""

    def make(name: str = "src", files: dict[str, str | bytes] | None = None) -> Path:
        root = tmp_path / name
        root.mkdir()
        contents: dict[str, str | bytes] = {"agent.yaml": MANIFEST, "grocery/__init__.py": "", "grocery/server.py": "X = 1\n"}
        contents.update(files or {})
        for rel, body in contents.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(body, bytes):
                path.write_bytes(body)
            else:
                path.write_text(body)
        return root

    return make


@pytest.fixture
def refuse(tmp_path: Path) -> Callable[..., DreamerError]:
    """Extract expecting a refusal; check nothing at all was left behind, return the error."""

    def run(data: bytes, limits: BundleLimits = BundleLimits()) -> DreamerError:
        parent = tmp_path / "unpacked"
        parent.mkdir(exist_ok=True)
        before = sorted(parent.iterdir())
        dest = parent / "bundle"
        with pytest.raises(DreamerError) as caught:
            extract(data, dest, limits)
        error = caught.value
        assert not dest.exists() and not dest.is_symlink()
        assert sorted(parent.iterdir()) == before, "a temporary sibling was left behind"
        assert error.code == "invalid_bundle", error.message
        assert "\n" not in error.message and "Traceback" not in error.message
        return error

    return run
