"""The dialogue suite's kernel: one per test module (each module runs on one pytest-xdist worker)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dialogue_suite import KernelProc, start_kernel  # (dialogue_suite puts tests/e2e, kernelproc's folder, on the path)


@pytest.fixture(scope="module")
def suite_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("dialogues") / "home", wait_s=300)
    yield k
    k.stop()
