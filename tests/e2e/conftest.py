"""Fixtures for end-to-end tests: a shared kernel and a kernel of one's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelproc import KernelProc, start_kernel


@pytest.fixture(scope="session")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("home"), wait_s=180)  # the first start installs the starters
    yield k
    k.stop()


@pytest.fixture
def fresh_kernel(tmp_path: Path) -> Iterator[KernelProc]:
    """A kernel of one's own, for tests that break or restart it."""
    k = start_kernel(tmp_path / "home")
    yield k
    k.stop()
