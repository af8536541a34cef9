"""What every confining backend (bwrap, docker) works out the same way before it starts a
worker: the checked folders, the interpreter, and the worker's whole environment."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dreamer.kernel.config import dreamer_home
from dreamer.kernel.sandbox.base import SandboxSpec, checked_dirs, worker_env
from dreamer.kernel.sandbox.mounts import mounts_env
from dreamer.kernel.sandbox.runtime import SDK_ROOT_IN_SANDBOX, Runtime, check_not_exposed, current_runtime

AGENT_DIR = "/agent"
DATA_DIR = "/data"


@dataclass(frozen=True)
class Confinement:
    bundle: Path  # host folder shown at /agent
    data: Path  # host folder shown at /data
    runtime: Runtime
    env: dict[str, str]


def confinement(spec: SandboxSpec) -> Confinement:
    bundle, data = checked_dirs(spec)
    runtime = current_runtime()
    check_not_exposed(runtime, [dreamer_home(), data])
    env = worker_env(
        agent_dir=AGENT_DIR,
        data_dir=DATA_DIR,
        pythonpath=[SDK_ROOT_IN_SANDBOX, *runtime.site_dirs],
        extra=spec.env,
    )
    if spec.mounts:
        env["DREAMER_MOUNTS"] = mounts_env(spec.mounts)
    return Confinement(bundle, data, runtime, env)
