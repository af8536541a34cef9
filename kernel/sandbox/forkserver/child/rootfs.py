"""The worker's file system, built from the kernel's list of steps, in bubblewrap's order.

The kernel (../plan.py) decides what is shown where; this module only carries it out,
in the forked init of the new namespaces, as bwrap does: a tmpfs base with the host's
root moved below it (/oldroot), the new root assembled on a tmpfs of its own
(/newroot) from binds of /oldroot/..., then made the root, with the host's detached.

Steps (JSON objects, `op` says which):
  {"op": "bind", "src": host path, "fd": n | null, "dst": path, "rw": bool}
      (with "fd": a granted folder, which must still be the n-th descriptor's folder)
  {"op": "symlink", "target": text, "dst": path}
  {"op": "dir", "dst": path}
  {"op": "proc", "dst": path}
  {"op": "dev", "dst": path}
  {"op": "tmpfs", "dst": path, "size": bytes}
  {"op": "remount_ro", "dst": path}
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping, Sequence
from typing import Any

from . import linux

BASE = "/tmp"  # in the new mount namespace only: the host's /tmp is untouched
NEW = "/newroot"
OLD = "/oldroot"
PROC_COVERED = ("sys", "sysrq-trigger", "irq", "bus")
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
             ("stderr", "/proc/self/fd/2"), ("core", "/proc/kcore"), ("ptmx", "pts/ptmx"))


def _inside(path: str) -> str:
    if not path.startswith("/") or "\0" in path or ".." in path.split("/"):
        raise OSError(f"sandbox path {path!r} is not an absolute path without '..'")
    return NEW + path


def _host(path: str) -> str:
    return OLD + path


def _make_point(target: str, directory: bool) -> None:
    if directory:
        os.makedirs(target, mode=0o755, exist_ok=True)
        return
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    if not os.path.lexists(target):
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))


def _bind(source: str, target: str, writable: bool, device: bool = False) -> None:
    _make_point(target, os.path.isdir(source))
    linux.mount(source, target, None, linux.MS_BIND | linux.MS_REC)
    # nosuid always, nodev but for the devices themselves, read-only unless asked; and the
    # flags the source mount already has, which a user namespace may not clear.
    flags = linux.MS_BIND | linux.MS_REMOUNT | linux.MS_NOSUID | linux.locked_flags(target)
    if not device:
        flags |= linux.MS_NODEV
    if not writable:
        flags |= linux.MS_RDONLY
    linux.mount(None, target, None, flags)


def _proc(target: str) -> None:
    """bwrap's --proc: a proc of the new pid namespace, with its host-wide knobs read-only."""
    os.makedirs(target, mode=0o755, exist_ok=True)
    linux.mount("proc", target, "proc", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC)
    for name in PROC_COVERED:
        path = f"{target}/{name}"
        try:
            _bind(path, path, writable=False)
        except OSError as error:
            # As bwrap: a folder this kernel lacks, or one a user namespace may not cover, stays as it is.
            if error.errno not in (errno.ENOENT, errno.EACCES, errno.EPERM, errno.EINVAL):
                raise


def _dev(target: str) -> None:
    """bwrap's --dev: a tmpfs with six device nodes bound in, the usual links, a private devpts."""
    os.makedirs(target, mode=0o755, exist_ok=True)
    linux.mount("tmpfs", target, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "mode=0755")
    for name in DEVICES:
        _bind(_host(f"/dev/{name}"), f"{target}/{name}", writable=True, device=True)
    for name, link in DEV_LINKS:
        os.symlink(link, f"{target}/{name}")
    os.mkdir(f"{target}/shm", 0o755)
    os.mkdir(f"{target}/pts", 0o755)
    linux.mount("devpts", f"{target}/pts", "devpts", linux.MS_NOSUID | linux.MS_NOEXEC,
                "newinstance,ptmxmode=0666,mode=620")


def _reopen_pinned(source: str, pinned: int) -> int:
    """The granted folder the kernel pinned (mounts.pin), opened again in this mount namespace.

    A descriptor opened before unshare belongs to the host's mount namespace, and Linux
    binds only mounts of the caller's own (EINVAL otherwise). So the folder is opened again
    by its path, through our copy of the host's mounts, and must be the very folder the
    kernel checked and pinned (same device and inode): a folder swapped since is refused.
    """
    again = os.open(_host(source), os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    was, now = os.fstat(pinned), os.fstat(again)
    if (was.st_dev, was.st_ino) != (now.st_dev, now.st_ino):
        os.close(again)
        raise OSError(f"the granted folder {source} was replaced while the sandbox started")
    return again


def _step(step: Mapping[str, Any], fds: Sequence[int]) -> None:
    op, target = step["op"], _inside(str(step["dst"]))
    if op == "bind":
        fd = step.get("fd")
        if fd is None:
            _bind(_host(str(step["src"])), target, bool(step.get("rw")))
            return
        pinned = _reopen_pinned(str(step["src"]), fds[int(fd)])
        try:
            _bind(_host(f"/proc/self/fd/{pinned}"), target, bool(step.get("rw")))
        finally:
            os.close(pinned)
    elif op == "symlink":
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        os.symlink(str(step["target"]), target)
    elif op == "dir":
        os.makedirs(target, mode=0o755, exist_ok=True)
    elif op == "proc":
        _proc(target)
    elif op == "dev":
        _dev(target)
    elif op == "tmpfs":
        os.makedirs(target, mode=0o755, exist_ok=True)
        size = int(step["size"])
        linux.mount("tmpfs", target, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, f"size={size},mode=0755")
    elif op == "remount_ro":
        flags = linux.MS_BIND | linux.MS_REMOUNT | linux.MS_RDONLY | linux.locked_flags(target)
        linux.mount(None, target, None, flags)
    else:
        raise OSError(f"unknown sandbox step {op!r}")


def build(steps: Sequence[Mapping[str, Any]], fds: Sequence[int]) -> None:
    """Make the new root from `steps` and enter it; the host's root is gone afterwards."""
    # Nothing done here may reach the host's mount table, nor the host's later mounts us.
    linux.mount(None, "/", None, linux.MS_SILENT | linux.MS_SLAVE | linux.MS_REC)
    linux.mount("tmpfs", BASE, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "mode=0755")
    os.mkdir(BASE + NEW, 0o755)
    os.mkdir(BASE + OLD, 0o755)
    linux.pivot_root(BASE, BASE + OLD)
    os.chdir("/")
    linux.mount("tmpfs", NEW, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "mode=0755")
    for step in steps:
        _step(step, fds)
    # The host's root leaves first; then the new root takes the place of the base.
    linux.umount(OLD)
    os.chdir(NEW)
    linux.pivot_root(".", ".")
    linux.umount(".")
    os.chdir("/")
