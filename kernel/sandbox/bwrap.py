"""The default backend: bubblewrap namespaces with an allow-list filesystem.

Inside, the worker sees /usr (and the merged-/usr links), the interpreter's own
folders, the SDK at /opt/dreamer/dreamer/sdk, its bundle at /agent (read-only), its
data at /data (read-write), a private /tmp, /proc of its own pid namespace, a
minimal /dev, and the host folders the user granted (`fs:` / `fs.ro:`) at
/mnt/<name>. No network (only a loopback of its own), no /etc, no /home, no
/root, nothing of $DREAMER_HOME but /data.
"""

from __future__ import annotations

import os
import subprocess
from functools import lru_cache
from pathlib import Path

from dreamer.kernel.sandbox import pids, seccomp
from dreamer.kernel.sandbox.base import Launch, Sandbox, SandboxSpec
from dreamer.kernel.sandbox.confined import AGENT_DIR, DATA_DIR, confinement
from dreamer.kernel.sandbox.mounts import MOUNT_ROOT, check_target, pin
from dreamer.kernel.sandbox.runtime import SDK_DIR_IN_SANDBOX, Runtime

# Top-level folders the dynamic loader and interpreter may reach through. On a
# merged-/usr host they are symlinks into /usr and are recreated as such.
SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")

# A tmpfs is RAM that no rlimit counts, and unsized it may grow to half the host's
# memory: /tmp and /dev/shm get this size (as under docker), and the sandbox's other
# tmpfs folders (/ and /dev) are made read-only once everything is mounted on them.
TMPFS_BYTES = 64 * 1024 * 1024


@lru_cache(maxsize=8)
def _help(bwrap: str) -> str:
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout + done.stderr


def supports_disable_userns(bwrap: str) -> bool:
    """bubblewrap >= 0.8 can forbid nested user namespaces; older ones refuse the flag."""
    return "--disable-userns" in _help(bwrap)


def supports_tmpfs_size(bwrap: str) -> bool:
    """Newer bubblewrap can size a tmpfs; older ones refuse --size."""
    return "--size" in _help(bwrap)


def _memory_folders(bwrap: str) -> list[str]:
    """/tmp and /dev/shm, sized when bwrap can; without --size /dev/shm stays read-only."""
    if not supports_tmpfs_size(bwrap):
        return ["--tmpfs", "/tmp", "--remount-ro", "/dev"]
    size = str(TMPFS_BYTES)
    return ["--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in SYSTEM_LINKS:
        path = Path("/", name)
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _runtime_binds(runtime: Runtime) -> list[str]:
    args: list[str] = []
    for root in runtime.roots:
        args += ["--ro-bind", str(root), str(root)]
    for link, target in runtime.links:
        # A link inside a bound folder is already there as the host's own symlink.
        if not any(link.is_relative_to(root) for root in runtime.roots) and not link.is_relative_to("/usr"):
            args += ["--symlink", str(target), str(link)]
    args += ["--ro-bind", str(runtime.sdk_dir), SDK_DIR_IN_SANDBOX]
    return args


class BwrapSandbox(Sandbox):
    name = "bwrap"

    def __init__(self, bwrap: str) -> None:
        self.bwrap = bwrap

    def plan(self, spec: SandboxSpec) -> Launch:
        confined = confinement(spec)
        bundle, data, runtime, env = confined.bundle, confined.data, confined.runtime, confined.env
        args = [
            self.bwrap,
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--clearenv",
        ]
        if supports_disable_userns(self.bwrap):
            # Nested user namespaces would hand the agent every capability again
            # inside them: a large kernel attack surface for no use of ours.
            args += ["--unshare-user", "--disable-userns"]
        args += _system_binds()
        args += ["--proc", "/proc", "--dev", "/dev", *_memory_folders(self.bwrap)]
        # After the tmpfs, so a runtime that lives under /tmp is still visible.
        args += _runtime_binds(runtime)
        args += ["--ro-bind", str(bundle), AGENT_DIR, "--bind", str(data), DATA_DIR, "--chdir", DATA_DIR]
        for name, value in env.items():
            args += ["--setenv", name, value]
        command = list(spec.argv) if spec.argv is not None else runtime.worker_argv()
        prlimit = pids.process_limit().prlimit
        if prlimit is not None:
            # No cgroup here: RLIMIT_NPROC set inside the sandbox's user namespace (pids.py).
            command = [prlimit, f"--nproc={spec.limits.processes}", "--", *command]
        for mount in spec.mounts:
            check_target(mount.target)
        # Last, so that nothing after the descriptors are opened can fail and leak them.
        filter_fd = seccomp.program_fd()
        try:
            fds = pin(spec.mounts)
        except BaseException:
            if filter_fd is not None:
                os.close(filter_fd)
            raise
        if filter_fd is not None:
            # Loaded by bwrap just before it runs the worker: the sandbox's own setup is done by then.
            args += ["--seccomp", str(filter_fd)]
        if spec.mounts:
            args += ["--dir", MOUNT_ROOT]
        for mount, fd in zip(spec.mounts, fds):
            args += ["--bind" if mount.writable else "--ro-bind", f"/proc/self/fd/{fd}", mount.target]
        # Every mount point exists by now; the root tmpfs takes no more writes.
        args += ["--remount-ro", "/"]
        # bwrap itself gets an empty environment: nothing of the kernel's reaches it.
        # --die-with-parent ties the sandbox to the kernel thread that forked it,
        # which is the event loop's, alive as long as the kernel.
        passed = (*fds, filter_fd) if filter_fd is not None else tuple(fds)
        return Launch(argv=[*args, "--", *command], env={}, cwd=data, pass_fds=passed)
