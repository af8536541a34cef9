"""Fixtures that start SDK workers for agent bundles (helpers in agent_worker.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from agent_worker import SDK_DIR, Worker


@pytest.fixture(scope="session")
def sdk_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding only dreamer/sdk, as the sandbox binds it (no kernel code)."""
    root = tmp_path_factory.mktemp("sdkpath")
    (root / "dreamer").mkdir()
    (root / "dreamer" / "sdk").symlink_to(SDK_DIR, target_is_directory=True)
    return root


@pytest.fixture
def start_worker(sdk_path: Path, tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    started: list[Worker] = []

    def start(bundle: Path, entry: str, agent: str, data_dir: Path | None = None) -> Worker:
        data = data_dir or tmp_path / "data" / agent
        data.mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": os.pathsep.join([str(sdk_path), sysconfig.get_paths()["purelib"]]),
            "DREAMER_AGENT_DIR": str(bundle),
            "DREAMER_DATA_DIR": str(data),
            "DREAMER_ENTRY": entry,
            "DREAMER_AGENT": agent,
            # The bundle is read-only in a real sandbox; keep the source tree free of caches too.
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        # stderr to a file: a pipe nobody reads would block a chatty worker.
        stderr_path = tmp_path / f"{agent}-{len(started)}.stderr"
        with stderr_path.open("wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-S", "-m", "dreamer.sdk.worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                env=env, cwd=tmp_path,
            )
        worker = Worker(agent=agent, process=process, stderr_path=stderr_path)
        worker.start_reader()
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
