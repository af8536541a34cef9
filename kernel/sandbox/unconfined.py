"""The `none` backend: the worker runs as the kernel's own user, with no isolation.

Only the environment, the working folder and the rlimits match the bwrap backend.
Agent code can read and write anything the kernel can, so this exists for hosts
without bubblewrap and only when asked for by name; every start says so loudly.

Granted folders (`fs:` / `fs.ro:`) cannot be shown at /mnt/<name> without a mount
namespace: DREAMER_MOUNTS (and so `ctx.mounts`) names them by their host paths,
and nothing makes an `fs.ro:` folder read-only. The `processes` limit holds only
where the kernel can make pids cgroups (pids.py); RLIMIT_NPROC is never set here,
since outside a user namespace it would count every process of the kernel's user.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from dreamer.kernel.sandbox.base import Launch, Sandbox, SandboxSpec, checked_dirs, worker_env
from dreamer.kernel.sandbox.mounts import mounts_env
from dreamer.kernel.sandbox.runtime import current_runtime

log = logging.getLogger("dreamer.sandbox")


@lru_cache(maxsize=1)
def sdk_path_root() -> Path:
    """A private folder holding only `dreamer/sdk` (a symlink to the installed SDK).

    With `python -S` no .pth file runs, so an editable install's import hook is not
    there and site-packages alone cannot provide dreamer.sdk; this folder does, and
    exposes nothing else of the kernel on the worker's path.
    """
    root = Path(tempfile.mkdtemp(prefix="dreamer-sdk-"))
    atexit.register(shutil.rmtree, root, True)
    (root / "dreamer").mkdir()
    (root / "dreamer" / "sdk").symlink_to(current_runtime().sdk_dir, target_is_directory=True)
    return root


class UnconfinedSandbox(Sandbox):
    name = "none"

    def plan(self, spec: SandboxSpec) -> Launch:
        bundle, data = checked_dirs(spec)
        runtime = current_runtime()
        env = worker_env(
            agent_dir=str(bundle),
            data_dir=str(data),
            pythonpath=[str(sdk_path_root()), *runtime.site_dirs],
            extra=spec.env,
        )
        if spec.mounts:
            env["DREAMER_MOUNTS"] = mounts_env(spec.mounts, remapped=False)
        command = list(spec.argv) if spec.argv is not None else runtime.worker_argv()
        return Launch(argv=command, env=env, cwd=data)

    async def start(self, spec: SandboxSpec) -> asyncio.subprocess.Process:
        log.warning(
            "sandbox 'none': agent code runs UNCONFINED with the kernel's privileges "
            "(bundle %s, data %s); install bubblewrap and unset DREAMER_SANDBOX to confine agents",
            spec.bundle_dir,
            spec.data_dir,
        )
        return await super().start(spec)
