"""The `processes` limit: how many processes and threads one worker may have at once.

RLIMIT_NPROC set by the kernel cannot do this job: it counts every process of the
kernel's uid on the host, and root is exempt from it. What works, in order:

1. cgroup. Each worker starts inside a pids cgroup of its own whose pids.max is
   the limit: cgroup v2 when the kernel may enable the pids controller in its own
   folder (see _enable_pids), else cgroup v1's pids hierarchy when the kernel can
   write it. It counts every process and thread, whatever they do with sessions
   and process groups, and lets `kill` reach them all.
2. namespace. Without a writable cgroup, and for a kernel that is not root (on
   Linux 5.14 or later), the bwrap backend starts the worker through
   `prlimit --nproc` *inside* the sandbox: there the count is per user namespace,
   so it counts that sandbox alone. (Set before bwrap, the new namespace would
   inherit the value as the ceiling for the uid's count on the whole host, and a
   busy desktop session would already be over it.)
3. Neither: the limit is not kept, and the kernel says so once.

The numbers count the sandbox's own processes too: bwrap keeps two (itself and
the namespace's init) next to the worker.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import re
import secrets
import shutil
import signal
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from dreamer.contracts.errors import DreamerError

log = logging.getLogger("dreamer.sandbox")

PREFIX = "dreamer-"
MOUNTINFO = Path("/proc/self/mountinfo")
OWN_CGROUP = Path("/proc/self/cgroup")
# Per-user-namespace RLIMIT_NPROC counting ("ucounts") arrived in Linux 5.14.
NPROC_PER_USERNS = (5, 14)
_OCTAL = re.compile(r"\\([0-7]{3})")


def _unescape(text: str) -> str:
    """mountinfo writes a space, tab, newline or backslash in a path as \\ and three octal digits."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), text)


_ROOT_NAME = re.compile(rf"{PREFIX}(\d+)-[0-9a-f]+")


@dataclass(frozen=True)
class CgroupMount:
    version: int  # 1 (a v1 hierarchy with the pids controller) or 2
    root: str  # the folder of the hierarchy this mount shows
    point: Path


def cgroup_mounts(mountinfo: str, controller: str = "pids") -> list[CgroupMount]:
    """The cgroup2 mounts and the v1 mounts that carry `controller`, from /proc/self/mountinfo."""
    found: list[CgroupMount] = []
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        if tail[0] == "cgroup2":
            version = 2
        elif tail[0] == "cgroup" and controller in tail[2].split(","):
            version = 1
        else:
            continue
        found.append(CgroupMount(version, _unescape(fields[3]), Path(_unescape(fields[4]))))
    return found


def own_cgroups(text: str, controller: str = "pids") -> dict[int, str]:
    """The kernel's own cgroup path in the unified hierarchy (2) and in the v1 `controller` one (1)."""
    paths: dict[int, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            paths[2] = path
        elif controller in controllers.split(","):
            paths[1] = path
    return paths


def folder_of(mount: CgroupMount, path: str) -> Path | None:
    """Where the hierarchy's `path` appears under `mount`, if it does at all."""
    root = mount.root.rstrip("/")
    if path != root and not path.startswith(root + "/"):
        return None
    rel = path[len(root):].strip("/")
    return mount.point / rel if rel else mount.point


@dataclass
class PidsGroup:
    """One worker's cgroup."""

    path: Path
    version: int

    @property
    def procs(self) -> str:
        return str(self.path / "cgroup.procs")

    def members(self) -> list[int]:
        try:
            return [int(pid) for pid in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill(self) -> None:
        """SIGKILL everything in the group, including what left the worker's process group."""
        kill_file = self.path / "cgroup.kill"
        if self.version == 2 and kill_file.exists():
            with contextlib.suppress(OSError):
                kill_file.write_text("1")
                return
        # v1 has no cgroup.kill: read and kill, a few rounds, for what forked in between.
        for _ in range(5):
            members = self.members()
            if not members:
                return
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> bool:
        """rmdir, which the kernel allows only once the group is empty."""
        try:
            self.path.rmdir()
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True


class PidsCgroups:
    """This kernel's own cgroup folder, with one group per running worker below it."""

    def __init__(self, root: Path, version: int) -> None:
        self.root = root
        self.version = version
        self._made = 0
        self._groups: dict[asyncio.subprocess.Process, PidsGroup] = {}
        self._leftovers: list[PidsGroup] = []
        self._tasks: set[asyncio.Task[None]] = set()
        atexit.register(self.remove_all)

    def open(self, max_pids: int) -> PidsGroup:
        self._leftovers = [g for g in self._leftovers if not g.remove()]
        self._made += 1
        group = PidsGroup(self.root / f"w{self._made}", self.version)
        try:
            group.path.mkdir()
            (group.path / "pids.max").write_text(f"{max_pids}\n")
        except OSError as error:
            group.remove()
            raise DreamerError(
                "sandbox_unavailable", f"cannot make the pids cgroup {group.path} for a worker: {error.strerror or error}"
            ) from None
        return group

    def watch(self, process: asyncio.subprocess.Process, group: PidsGroup) -> None:
        """Remember the worker's group, and remove the group once the worker is gone."""
        self._groups[process] = group
        task = asyncio.get_running_loop().create_task(self._release(process, group))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def kill(self, process: asyncio.subprocess.Process) -> None:
        group = self._groups.get(process)
        if group is not None:
            group.kill()

    async def _release(self, process: asyncio.subprocess.Process, group: PidsGroup) -> None:
        try:
            await process.wait()
            # Whatever the worker left behind (the none backend has no pid namespace).
            group.kill()
            for _ in range(40):
                if group.remove():
                    return
                await asyncio.sleep(0.05)
            self._leftovers.append(group)
        except asyncio.CancelledError:
            group.kill()
            if not group.remove():
                self._leftovers.append(group)
            raise
        finally:
            self._groups.pop(process, None)

    def remove_all(self) -> None:
        """At exit: empty and remove every group of this kernel, then its own folder."""
        groups = [PidsGroup(path, self.version) for path in _children(self.root)]
        deadline = time.monotonic() + 2.0
        while groups and time.monotonic() < deadline:
            for group in groups:
                group.kill()
            groups = [g for g in groups if not g.remove()]
            if groups:
                time.sleep(0.02)
        with contextlib.suppress(OSError):
            self.root.rmdir()


def _children(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_dir()]
    except OSError:
        return []


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep(folder: Path) -> None:
    """Remove empty folders of kernels that died. Only rmdir, never kill: a kernel in
    another pid namespace (a container) sharing this hierarchy looks dead from here."""
    for root in _children(folder):
        match = _ROOT_NAME.fullmatch(root.name)
        if match is None or _pid_alive(int(match.group(1))):
            continue
        for group in _children(root):
            with contextlib.suppress(OSError):
                group.rmdir()
        with contextlib.suppress(OSError):
            root.rmdir()


def _enable_pids(folder: Path) -> bool:
    """Whether children of the kernel's v2 folder get pids.max; enables the controller if allowed.

    cgroup v2 lets a folder hand controllers to its children only while it holds no
    process itself (the root excepted). When the kernel is alone in its folder (a
    service with Delegate=yes), it moves into a leaf of its own first, as systemd
    asks of delegated services; it never moves when anything else shares the folder.
    """
    control = folder / "cgroup.subtree_control"
    try:
        if "pids" not in (folder / "cgroup.controllers").read_text().split():
            return False
        if "pids" in control.read_text().split():
            return True
        try:
            control.write_text("+pids")
            return True
        except OSError:
            if (folder / "cgroup.procs").read_text().split() != [str(os.getpid())]:
                return False
        leaf = folder / f"{PREFIX}kernel"
        leaf.mkdir(exist_ok=True)
        (leaf / "cgroup.procs").write_text(str(os.getpid()))
        control.write_text("+pids")
    except OSError:
        return False
    return True


def _make_root(folder: Path, version: int) -> Path | None:
    if version == 2 and not _enable_pids(folder):
        return None
    _sweep(folder)
    root = folder / f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    try:
        root.mkdir()
        if version == 2:
            (root / "cgroup.subtree_control").write_text("+pids")
        elif not (root / "pids.max").exists():
            raise OSError("no pids.max")
    except OSError:
        with contextlib.suppress(OSError):
            root.rmdir()
        return None
    return root


def find_cgroups() -> PidsCgroups | None:
    """A pids cgroup folder of this kernel's own, if the host lets it make one."""
    try:
        mounts = cgroup_mounts(MOUNTINFO.read_text())
        own = own_cgroups(OWN_CGROUP.read_text())
    except OSError:
        return None
    for version in (2, 1):
        path = own.get(version)
        for mount in mounts:
            folder = folder_of(mount, path) if path is not None and mount.version == version else None
            if folder is None or not folder.is_dir():
                continue
            root = _make_root(folder, version)
            if root is not None:
                return PidsCgroups(root, version)
    return None


def _kernel_release() -> tuple[int, ...]:
    numbers = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (int(numbers.group(1)), int(numbers.group(2))) if numbers else (0, 0)


def prlimit_in_sandbox() -> str | None:
    """prlimit (under /usr, which every sandbox binds) when RLIMIT_NPROC set inside a user
    namespace counts only that namespace; None when it would not work."""
    if os.geteuid() == 0 or _kernel_release() < NPROC_PER_USERNS:
        return None
    found = shutil.which("prlimit", path="/usr/bin:/bin")
    if found is None or not Path(found).resolve().is_relative_to("/usr"):
        return None
    return str(Path(found).resolve())


@dataclass(frozen=True)
class ProcessLimit:
    """How this kernel keeps the `processes` limit (see the module's docstring)."""

    cgroups: PidsCgroups | None
    prlimit: str | None  # for bwrap only, and only when there are no cgroups

    @property
    def how(self) -> str:
        if self.cgroups is not None:
            return f"cgroup v{self.cgroups.version}"
        return "namespace" if self.prlimit else "none"


@lru_cache(maxsize=1)
def process_limit() -> ProcessLimit:
    """Found once per process, on the first worker start."""
    cgroups = find_cgroups()
    prlimit = None if cgroups is not None else prlimit_in_sandbox()
    if cgroups is None and prlimit is None:
        why = (
            "the kernel runs as root, which RLIMIT_NPROC does not bind"
            if os.geteuid() == 0
            else "this Linux counts RLIMIT_NPROC across the whole host user"
        )
        log.warning(
            "the processes limit is NOT enforced: no pids cgroup is writable here and %s; run the kernel "
            "where it may make pids cgroups (cgroup v1's pids hierarchy, or a systemd service with "
            "Delegate=yes on cgroup v2)", why
        )
    return ProcessLimit(cgroups, prlimit)


def open_group(max_pids: int) -> PidsGroup | None:
    """A fresh cgroup for one worker, or None when this host has no cgroups for us."""
    cgroups = process_limit().cgroups
    return None if cgroups is None else cgroups.open(max_pids)


def watch(process: asyncio.subprocess.Process, group: PidsGroup) -> None:
    cgroups = process_limit().cgroups
    if cgroups is not None:
        cgroups.watch(process, group)


def kill(process: asyncio.subprocess.Process) -> None:
    """Kill every process in the worker's cgroup (nothing without cgroups)."""
    cgroups = process_limit().cgroups
    if cgroups is not None:
        cgroups.kill(process)
