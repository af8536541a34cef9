"""Fixtures for the tool registry tests: one kernel process per module, the test bundles."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
sys.path.insert(0, str(HERE.parent / "sandbox"))  # docker_engine: the engine the docker tests use

from kernelproc import KernelProc, start_kernel  # noqa: E402

BUNDLES = HERE / "bundles"


@pytest.fixture(scope="module")
def tool_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("home"), {"DREAMER_TOOL_TIMEOUT": "4"})
    yield k
    k.stop()
