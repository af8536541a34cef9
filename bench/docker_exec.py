"""Docker measurements for the benchmark, importable by bench_calls.py:

- `docker_exec_roundtrip(runs)`: `docker exec <container> python -S -c pass` into a
  running container, which is what runtimes that keep one container per agent and
  exec into it pay per action;
- `docker_worker_cold_start(runs)`: a fresh docker-backend worker, from `docker run`
  to its answer to `describe` on the grocery agent (what the kernel pays when no
  warm worker is left).

Both use the docker backend itself (same image, binds and limits as a real worker)
and remove every container they make. Each returns seconds, one sample per run;
both raise DreamerError (one sentence) when no Docker engine answers.

    .venv/bin/python bench/docker_exec.py [runs]
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dreamer.agents.bundles import starter_bundles
from dreamer.kernel.config import Limits
from dreamer.kernel.sandbox import SandboxSpec, get_sandbox
from dreamer.kernel.sandbox.docker import DockerSandbox
from dreamer.kernel.sandbox.runtime import current_runtime
from dreamer.kernel.workers.connection import WorkerConnection

DESCRIBE_TIMEOUT_S = 60.0


def _docker() -> DockerSandbox:
    sandbox = get_sandbox("docker")
    assert isinstance(sandbox, DockerSandbox)
    return sandbox


def _grocery() -> Path:
    return next(folder for folder in starter_bundles() if folder.name == "grocery")


def docker_exec_roundtrip(runs: int) -> list[float]:
    """Seconds per `docker exec ... python -S -c pass` into one running worker container."""
    sandbox = _docker()
    python = current_runtime().python

    async def measure() -> list[float]:
        with tempfile.TemporaryDirectory(prefix="dreamer-bench-") as tmp:
            data = Path(tmp)
            spec = SandboxSpec(
                bundle_dir=_grocery(),
                data_dir=data,
                env={"DREAMER_AGENT": "bench"},
                limits=Limits(),
                argv=[python, "-S", "-c", "import sys, time; print('up', flush=True); time.sleep(3600)"],
            )
            process = await sandbox.start(spec)
            name = sandbox.container_name(process)
            try:
                assert process.stdout is not None and name is not None
                await asyncio.wait_for(process.stdout.readline(), timeout=DESCRIBE_TIMEOUT_S)
                command = [sandbox.cli, "exec", name, python, "-S", "-c", "pass"]
                env = {"PATH": "/usr/bin:/bin", "DOCKER_HOST": sandbox.url}
                samples = []
                for _ in range(runs):
                    started = time.perf_counter()
                    subprocess.run(command, env=env, check=True, capture_output=True)
                    samples.append(time.perf_counter() - started)
                return samples
            finally:
                sandbox.kill(process)
                await process.wait()

    try:
        return asyncio.run(measure())
    finally:
        sandbox.close()


def docker_worker_cold_start(runs: int) -> list[float]:
    """Seconds from starting a docker-backend worker to its answer to `describe` (grocery)."""
    sandbox = _docker()

    async def once(data: Path) -> float:
        spec = SandboxSpec(
            bundle_dir=_grocery(),
            data_dir=data,
            env={"DREAMER_AGENT": "grocery", "DREAMER_ENTRY": "grocery.server"},
            limits=Limits(),
        )
        started = time.perf_counter()
        worker = WorkerConnection(process=await sandbox.start(spec), label="grocery", kill_group=sandbox.kill)
        try:
            described = await worker.request("describe", {}, timeout=DESCRIBE_TIMEOUT_S)
            elapsed = time.perf_counter() - started
            assert described.get("functions"), described
            return elapsed
        finally:
            await worker.close(grace=1.0)

    async def measure() -> list[float]:
        with tempfile.TemporaryDirectory(prefix="dreamer-bench-") as tmp:
            return [await once(Path(tmp)) for _ in range(runs)]

    try:
        return asyncio.run(measure())
    finally:
        sandbox.close()


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    report = {}
    for label, measure in (("docker_worker_cold_start", docker_worker_cold_start), ("docker_exec_python_pass", docker_exec_roundtrip)):
        samples = measure(runs)
        report[label] = {
            "p50_ms": round(statistics.median(samples) * 1000, 1),
            "min_ms": round(min(samples) * 1000, 1),
            "max_ms": round(max(samples) * 1000, 1),
            "n": runs,
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
