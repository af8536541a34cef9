"""The one sandbox interface: start a worker confined, and kill it with all it spawned."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dreamer.kernel.config import Limits
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox import memory_cgroup, pids
from dreamer.kernel.sandbox.rlimits import preexec
from dreamer.kernel.sandbox.runtime import current_runtime
from dreamer.kernel.sandbox.spawn import create_process

# Room above the largest protocol message for the JSON-RPC envelope and newline.
STDOUT_SLACK_BYTES = 64 * 1024

# Variables every backend sets; the caller's env may not replace them, because
# they decide what code the worker loads and where it may write.
BASE_ENV: dict[str, str] = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    # pydantic looks for plugins through importlib.metadata, scanning every installed
    # distribution: a third of a worker's start, for plugins a worker must not load anyway.
    "PYDANTIC_DISABLE_PLUGINS": "__all__",
}
OWNED_ENV = frozenset(BASE_ENV) | {"PYTHONPATH", "DREAMER_AGENT_DIR", "DREAMER_DATA_DIR", "DREAMER_MOUNTS"}

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Mount:
    """A host folder the user granted (`fs:` / `fs.ro:`), shown to the agent at `target`."""

    source: Path  # canonical host path, already checked against the grant
    target: str  # where the agent sees it, e.g. /mnt/notes
    writable: bool = False


@dataclass(frozen=True)
class SandboxSpec:
    bundle_dir: Path  # bound read-only at /agent
    data_dir: Path  # bound read-write at /data; created by the caller
    env: Mapping[str, str]  # extra variables (DREAMER_AGENT, DREAMER_ENTRY)
    limits: Limits
    argv: Sequence[str] | None = None  # default: [python, "-S", "-m", "dreamer.sdk.worker"]
    mounts: Sequence[Mount] = ()  # granted host folders (issue 3); empty for most agents


@dataclass(frozen=True)
class Launch:
    """Exactly what gets executed on the host: the plan a backend makes from a spec."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    # Descriptors the program must inherit (bwrap binds granted folders through
    # them); the launch owns them, and whoever executes it closes them after.
    pass_fds: tuple[int, ...] = ()

    def close(self) -> None:
        for fd in self.pass_fds:
            try:
                os.close(fd)
            except OSError:
                pass


def worker_env(*, agent_dir: str, data_dir: str, pythonpath: Sequence[str], extra: Mapping[str, str]) -> dict[str, str]:
    """The whole environment of a worker: nothing is inherited from the kernel."""
    for name, value in extra.items():
        if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
            raise DreamerError("invalid_argument", f"sandbox variable name {name!r} is not a valid environment name")
        if name in OWNED_ENV:
            raise DreamerError(
                "invalid_argument", f"sandbox variable {name} is set by the sandbox and cannot be overridden"
            )
        if not isinstance(value, str) or "\0" in value:
            raise DreamerError("invalid_argument", f"sandbox variable {name} must be a string without NUL bytes")
    env = dict(BASE_ENV)
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(pythonpath))
    env["DREAMER_AGENT_DIR"] = agent_dir
    env["DREAMER_DATA_DIR"] = data_dir
    env.update(extra)
    return env


def checked_dirs(spec: SandboxSpec) -> tuple[Path, Path]:
    """Absolute, existing bundle and data folders, or one clear sentence why not."""
    found: list[Path] = []
    for label, path in (("bundle", spec.bundle_dir), ("data", spec.data_dir)):
        real = Path(path).resolve()
        if not real.is_dir():
            raise DreamerError("internal", f"sandbox {label} folder {real} does not exist")
        found.append(real)
    return found[0], found[1]


def _close_protocol_pipes(process: asyncio.subprocess.Process) -> None:
    """Drop stdin and stdout of a killed worker so that `await process.wait()` returns.

    asyncio's wait() also waits for every pipe to reach EOF, and a stdout reader that
    stopped reading (say after an oversized line) never sees EOF: wait() would hang
    forever on a process that is long dead. A killed worker's protocol channel is
    useless anyway; stderr stays open so its last words can still be collected.
    """
    if process.stdin is not None:
        process.stdin.close()
    transport = getattr(process, "_transport", None)
    if transport is None:
        return
    pipe = transport.get_pipe_transport(1)
    if pipe is not None:
        pipe.close()


class Sandbox(ABC):
    name: str

    @abstractmethod
    def plan(self, spec: SandboxSpec) -> Launch:
        """The command, environment and folder that start `spec` confined."""

    async def start(self, spec: SandboxSpec) -> asyncio.subprocess.Process:
        # A pids cgroup of its own, joined before exec (see pids.py), when the host has them.
        group = pids.open_group(spec.limits.processes)
        memory: pids.PidsGroup | None = None
        try:
            # And a memory cgroup (memory_cgroup.py): the limit for the whole worker.
            memory = memory_cgroup.open_group(spec.limits.address_space_mb, group)
            process = await self._spawn(spec, group, memory)
        except BaseException:
            for made in (group, memory):
                if made is not None:
                    made.remove()
            raise
        if group is not None:
            pids.watch(process, group)
        if memory is not None:
            memory_cgroup.watch(process, memory)
        return process

    async def _spawn(
        self, spec: SandboxSpec, group: pids.PidsGroup | None, memory: pids.PidsGroup | None = None
    ) -> asyncio.subprocess.Process:
        launch = self.plan(spec)
        try:
            return await create_process(
                *launch.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=launch.env,
                cwd=launch.cwd,
                pass_fds=launch.pass_fds,
                # Its own process group, so kill() reaches everything it spawned.
                start_new_session=True,
                preexec_fn=memory_cgroup.joining(
                    memory, preexec(spec.limits, group.procs if group is not None else None)
                ),
                limit=spec.limits.max_message_bytes + STDOUT_SLACK_BYTES,
            )
        except OSError as error:
            reason = error.strerror or str(error)
            raise DreamerError(
                "sandbox_unavailable", f"cannot start the {self.name} sandbox ({launch.argv[0]}): {reason}"
            ) from None
        except subprocess.SubprocessError:
            # Raised only by the preexec step, whose one fallible part is joining the cgroup.
            raise DreamerError(
                "sandbox_unavailable", f"cannot start the {self.name} sandbox: the worker could not join its cgroups"
            ) from None
        finally:
            launch.close()

    def kill(self, process: asyncio.subprocess.Process) -> None:
        """SIGKILL the process group; a no-op for what is already gone.

        The group is signalled even after the leader was reaped: stragglers of an
        unconfined worker still hold the group id, and while they do Linux cannot
        hand that number to another process.
        """
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        # Everything in its cgroup, whatever session or group it moved to.
        pids.kill(process)
        memory_cgroup.kill(process)
        # The leader itself, in case it moved to another group (setsid, setpgid).
        try:
            process.kill()
        except ProcessLookupError:
            pass
        _close_protocol_pipes(process)

    async def prepare(self) -> None:
        """Start what this backend keeps ahead of the first worker (the fork server's zygote);
        most backends keep nothing."""
        return None

    async def probe(self, limits: Limits | None = None) -> None:
        """Start a trivial interpreter in this sandbox; say why when it cannot start."""
        with tempfile.TemporaryDirectory(prefix="dreamer-probe-") as tmp:
            bundle, data = Path(tmp, "agent"), Path(tmp, "data")
            bundle.mkdir()
            data.mkdir()
            spec = SandboxSpec(
                bundle_dir=bundle,
                data_dir=data,
                env={},
                limits=limits or Limits(),
                argv=[current_runtime().python, "-S", "-c", "import json"],
            )
            process = await self.start(spec)
            try:
                _, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
            except TimeoutError:
                self.kill(process)
                await process.wait()
                message = f"the {self.name} sandbox did not start within 30 s"
                raise DreamerError("sandbox_unavailable", message) from None
            if process.returncode != 0:
                reason = stderr.decode(errors="replace").strip().splitlines()
                detail = reason[-1] if reason else f"exit status {process.returncode}"
                raise DreamerError("sandbox_unavailable", f"the {self.name} sandbox cannot start a worker: {detail}")

