"""What one forked worker gets, decided by the kernel: the same as bwrap gives it.

The steps are bwrap.py's arguments, one for one, as data the zygote's fork carries
out (child/rootfs.py): the system and runtime folders read-only, a /proc and a /dev of
its own, sized /tmp and /dev/shm, the SDK at /opt/dreamer, the bundle read-only at
/agent, the data read-write at /data, the granted folders through descriptors pinned
here, and / read-only at the end. The environment is `worker_env`'s, whole.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamer.kernel.sandbox import pids, seccomp
from dreamer.kernel.sandbox.base import SandboxSpec
from dreamer.kernel.sandbox.bwrap import SYSTEM_LINKS, TMPFS_BYTES
from dreamer.kernel.sandbox.confined import AGENT_DIR, DATA_DIR, confinement
from dreamer.kernel.sandbox.mounts import MOUNT_ROOT, check_target, pin
from dreamer.kernel.sandbox.rlimits import rlimit_table
from dreamer.kernel.sandbox.runtime import SDK_DIR_IN_SANDBOX, Runtime

Step = dict[str, Any]


@dataclass
class ForkRequest:
    """The message for the zygote and the descriptors that go with it (closed after sending)."""

    message: dict[str, Any]
    mount_fds: list[int] = field(default_factory=list)

    def close(self) -> None:
        for fd in self.mount_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.mount_fds = []


def _bind(src: str | Path, dst: str | Path, rw: bool = False) -> Step:
    return {"op": "bind", "src": str(src), "dst": str(dst), "rw": rw}


def _system_steps() -> list[Step]:
    steps = [_bind("/usr", "/usr")]
    for name in SYSTEM_LINKS:
        path = Path("/", name)
        if os.path.islink(path):
            steps.append({"op": "symlink", "target": os.readlink(path), "dst": str(path)})
        elif path.is_dir():
            steps.append(_bind(path, path))
    return steps


def _runtime_steps(runtime: Runtime) -> list[Step]:
    steps = [_bind(root, root) for root in runtime.roots]
    for link, target in runtime.links:
        if not any(link.is_relative_to(root) for root in runtime.roots) and not link.is_relative_to("/usr"):
            steps.append({"op": "symlink", "target": str(target), "dst": str(link)})
    steps.append(_bind(runtime.sdk_dir, SDK_DIR_IN_SANDBOX))
    return steps


def fork_request(spec: SandboxSpec) -> ForkRequest:
    confined = confinement(spec)
    steps = _system_steps()
    steps += [
        {"op": "proc", "dst": "/proc"},
        {"op": "dev", "dst": "/dev"},
        {"op": "tmpfs", "dst": "/tmp", "size": TMPFS_BYTES},
        {"op": "tmpfs", "dst": "/dev/shm", "size": TMPFS_BYTES},
        {"op": "remount_ro", "dst": "/dev"},
    ]
    # After the tmpfs, as in bwrap.py (the zygote's fork binds from the host's own tree anyway).
    steps += _runtime_steps(confined.runtime)
    steps += [_bind(confined.bundle, AGENT_DIR), _bind(confined.data, DATA_DIR, rw=True)]
    for mount in spec.mounts:
        check_target(mount.target)
    if spec.mounts:
        steps.append({"op": "dir", "dst": MOUNT_ROOT})
    for index, mount in enumerate(spec.mounts):
        steps.append({"op": "bind", "src": str(mount.source), "fd": index, "dst": mount.target, "rw": mount.writable})
    steps.append({"op": "remount_ro", "dst": "/"})
    limit = pids.process_limit()
    code = seccomp.program()
    message: dict[str, Any] = {
        "op": "fork",
        # None: the SDK worker, served by the fork itself; otherwise the command to exec.
        "argv": list(spec.argv) if spec.argv is not None else None,
        "env": confined.env,
        "cwd": DATA_DIR,
        "mounts": steps,
        "rlimits": [[kind, value] for kind, value in rlimit_table(spec.limits)],
        # Without cgroups, RLIMIT_NPROC set inside the user namespace, where bwrap runs prlimit.
        "nproc": spec.limits.processes if limit.cgroups is None and limit.prlimit is not None else None,
        "seccomp": code.hex() if code is not None else None,
        "cgroups": [],
    }
    # Last, so that nothing after the descriptors are opened can fail and leak them.
    return ForkRequest(message, pin(spec.mounts))
