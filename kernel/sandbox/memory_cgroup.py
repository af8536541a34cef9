"""The memory limit for the whole worker, not for each of its processes.

RLIMIT_AS (rlimits.py) bounds what one process maps. It does not bound a worker that
forks several processes, each under the limit, nor SysV shared memory filled and
detached again, which lives in no address space at all. A memory cgroup counts every
page the worker's processes are charged for, shared memory and tmpfs included, and
its OOM killer stops the worker at the limit. Like the pids cgroup (pids.py):

- cgroup v1: a group per worker in the memory hierarchy, below a folder of this
  kernel's own; memory.limit_in_bytes is the limit, and memory.memsw.limit_in_bytes
  (when swap accounting is on) the same, so the worker cannot swap its way past it.
  The worker joins it before exec, like its pids group.
- cgroup v2: a process is in one cgroup only, so the limit goes on the worker's pids
  group itself (memory.max, and memory.swap.max = 0), once the memory controller is
  enabled for those groups.
- Neither: the kernel says so once, and the per-process RLIMIT_AS still applies.

The docker backend does not use this: its container has a memory cgroup of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox import pids
from dreamer.kernel.sandbox.pids import PREFIX, PidsCgroups, PidsGroup, _sweep, cgroup_mounts, folder_of, own_cgroups

log = logging.getLogger("dreamer.sandbox")

MIB = 1024 * 1024


def _write(path: Path, value: str) -> None:
    path.write_text(f"{value}\n")


def _limit_v1(folder: Path, limit_mb: int) -> None:
    _write(folder / "memory.limit_in_bytes", str(limit_mb * MIB))
    # memsw must stay >= limit_in_bytes, so it is set after it. Absent without swap accounting.
    memsw = folder / "memory.memsw.limit_in_bytes"
    if memsw.exists():
        _write(memsw, str(limit_mb * MIB))


def _limit_v2(folder: Path, limit_mb: int) -> None:
    _write(folder / "memory.max", str(limit_mb * MIB))
    swap = folder / "memory.swap.max"
    if swap.exists():  # absent when the host has no swap accounting
        _write(swap, "0")


class MemoryCgroups(PidsCgroups):
    """cgroup v1: this kernel's folder in the memory hierarchy, a group per worker below.

    Everything but making a group (watch, kill, release, remove at exit) is the pids
    groups' own code: only the file that holds the limit differs.
    """

    def open(self, max_pids: int) -> PidsGroup:  # here the number is the limit in MiB
        self._leftovers = [g for g in self._leftovers if not g.remove()]
        self._made += 1
        group = PidsGroup(self.root / f"w{self._made}", self.version)
        try:
            group.path.mkdir()
            _limit_v1(group.path, max_pids)
        except OSError as error:
            group.remove()
            raise DreamerError(
                "sandbox_unavailable",
                f"cannot make the memory cgroup {group.path} for a worker: {error.strerror or error}",
            ) from None
        return group


def _enable_memory(folder: Path) -> bool:
    """Whether the children of a v2 folder get memory.max; enables the controller if allowed."""
    control = folder / "cgroup.subtree_control"
    try:
        if "memory" not in (folder / "cgroup.controllers").read_text().split():
            return False
        if "memory" not in control.read_text().split():
            control.write_text("+memory")
    except OSError:
        return False
    return True


def _make_v1_root(folder: Path) -> Path | None:
    _sweep(folder)
    root = folder / f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    try:
        root.mkdir()
        if not (root / "memory.limit_in_bytes").exists():
            raise OSError("no memory.limit_in_bytes")
    except OSError:
        with contextlib.suppress(OSError):
            root.rmdir()
        return None
    return root


def find_v1_cgroups() -> MemoryCgroups | None:
    """A v1 memory cgroup folder of this kernel's own, if the host lets it make one."""
    try:
        mounts = cgroup_mounts(pids.MOUNTINFO.read_text(), "memory")
        own = own_cgroups(pids.OWN_CGROUP.read_text(), "memory")
    except OSError:
        return None
    path = own.get(1)
    if path is None:
        return None
    for mount in mounts:
        folder = folder_of(mount, path) if mount.version == 1 else None
        if folder is None or not folder.is_dir():
            continue
        root = _make_v1_root(folder)
        if root is not None:
            return MemoryCgroups(root, 1)
    return None


def _v2_on_pids_groups() -> bool:
    """Whether the (v2) pids groups of this kernel can carry memory.max too."""
    cgroups = pids.process_limit().cgroups
    if cgroups is None or cgroups.version != 2:
        return False
    return _enable_memory(cgroups.root.parent) and _enable_memory(cgroups.root)


@dataclass(frozen=True)
class MemoryLimit:
    """How this kernel keeps the memory limit for a whole worker (see the module's docstring)."""

    cgroups: MemoryCgroups | None  # cgroup v1: groups of their own
    on_pids_groups: bool  # cgroup v2: the limit is set on each worker's pids group

    @property
    def how(self) -> str:
        if self.cgroups is not None:
            return "cgroup v1"
        return "cgroup v2" if self.on_pids_groups else "none"


@lru_cache(maxsize=1)
def memory_limit() -> MemoryLimit:
    """Found once per process, on the first worker start."""
    cgroups = find_v1_cgroups()
    on_pids = cgroups is None and _v2_on_pids_groups()
    if cgroups is None and not on_pids:
        log.warning(
            "the memory limit binds each worker process alone (RLIMIT_AS), not the whole worker: "
            "no memory cgroup is writable here, so an agent that forks or fills shared memory may "
            "hold more; run the kernel where it may make memory cgroups (cgroup v1's memory "
            "hierarchy, or a systemd service with Delegate=yes on cgroup v2)"
        )
    return MemoryLimit(cgroups, on_pids)


def open_group(limit_mb: int, pids_group: PidsGroup | None) -> PidsGroup | None:
    """Set up the memory limit of one worker about to start.

    Returns a v1 group the worker must join before exec (see `joining`), or None: on
    cgroup v2 the limit is written onto `pids_group` itself, which the worker joins anyway.
    """
    found = memory_limit()
    if found.cgroups is not None:
        return found.cgroups.open(limit_mb)
    if found.on_pids_groups and pids_group is not None:
        try:
            _limit_v2(pids_group.path, limit_mb)
        except OSError as error:
            raise DreamerError(
                "sandbox_unavailable",
                f"cannot set the memory limit on the cgroup {pids_group.path}: {error.strerror or error}",
            ) from None
    return None


def joining(group: PidsGroup | None, then: Callable[[], None]) -> Callable[[], None]:
    """A preexec_fn that moves the child into `group` (if any) and then runs `then`.

    Only system calls with values computed here, as fits a forked child; a failure
    aborts the start rather than run the worker without its limit.
    """
    if group is None:
        return then
    procs = group.procs

    def apply() -> None:
        fd = os.open(procs, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)
        then()

    return apply


def watch(process: asyncio.subprocess.Process, group: PidsGroup) -> None:
    cgroups = memory_limit().cgroups
    if cgroups is not None:
        cgroups.watch(process, group)


def kill(process: asyncio.subprocess.Process) -> None:
    """Kill every process in the worker's v1 memory group (on v2 the pids group does it)."""
    cgroups = memory_limit().cgroups
    if cgroups is not None:
        cgroups.kill(process)
