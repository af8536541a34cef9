"""Host folders granted with `fs:<path>` (read-write) and `fs.ro:<path>` (read-only).

Each granted folder is bound into the sandbox at `/mnt/<name>`, name being the
folder's own name (`notes`, then `notes-2`, ... when two share one). What is bound
is exactly the folder the grant names:

- the path must be canonical: a symbolic link anywhere on it would let whoever
  controls the link choose what the agent sees, so the grant is refused and the
  message names the real folder to grant instead;
- `/`, the folders of the system and the shared top-level folders (/home, /tmp,
  ...) are refused, and so is anything that is, holds or sits in $DREAMER_HOME
  (every user's data, the kernel's database and credentials);
- a read-write grant may not hold or sit in dreamer's own program folders (every
  top-level package, the checkout holding them, the virtualenv, site-packages and the
  Python runtime): written, they change what the kernel serves (web/static) or runs;
- the bwrap backend binds the folder through a descriptor opened and checked just
  before the start (`pin`), so swapping a folder for a link between the check
  and the bind changes nothing.

A link *inside* a bound folder is not followed by the bind: in the sandbox it
resolves against the sandbox's own tree, so one pointing out of the folder dangles.
"""

from __future__ import annotations

import importlib.util
import json
import os
import site
import sys
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from dreamer.contracts.errors import DreamerError
from dreamer.contracts.scopes import Scope, ScopeError, parse_scope
from dreamer.kernel.sandbox.base import Mount
from dreamer.kernel.sandbox.runtime import current_runtime

PACKAGE_FOLDERS = ("kernel", "sidekick", "sdk", "cli", "agents", "gallery", "web")
MOUNT_ROOT = "/mnt"
FS_KINDS = ("fs", "fs.ro")

# Never bound, nor anything in them: the system itself.
SYSTEM_TREES = tuple(
    Path(p)
    for p in (
        "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin",
        "/snap", "/sys", "/usr", "/var/cache", "/var/lib", "/var/log", "/var/mail", "/var/run", "/var/spool",
    )
)
# Never bound themselves, because they hold everyone's files; a folder in one may be.
SHARED_FOLDERS = frozenset(
    Path(p) for p in ("/", "/home", "/media", "/mnt", "/opt", "/root", "/srv", "/tmp", "/var", "/var/tmp")
)


def relation(a: Path, b: Path) -> str | None:
    """How folder a stands to folder b, in words, when one is in the other."""
    if a == b:
        return "is"
    if b.is_relative_to(a):
        return "holds"
    if a.is_relative_to(b):
        return "is inside"
    return None


@lru_cache(maxsize=1)
def program_folders() -> tuple[Path, ...]:
    """Every folder dreamer runs from: each top-level package, the folder holding them,
    the virtualenv, site-packages and the Python runtime. Changed by an agent, they would
    change what the kernel serves or runs; read, they hold nothing a user needs."""
    found: list[Path] = []
    packages: list[Path] = []
    for name in PACKAGE_FOLDERS:
        spec = importlib.util.find_spec(f"dreamer.{name}")
        if spec is not None and spec.origin:
            packages.append(Path(spec.origin).resolve().parent)
    found += packages
    parents = {p.parent for p in packages}
    if len(parents) == 1 and (parent := parents.pop()) not in SHARED_FOLDERS:
        found.append(parent)  # a source checkout: its docs, scripts and .venv too
    prefixes = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    found += [Path(p).resolve() for p in prefixes]
    sites = [*site.getsitepackages(), site.getusersitepackages()]
    found += [Path(p).resolve() for p in sites if Path(p).is_dir()]
    runtime = current_runtime()
    found += [*runtime.roots, runtime.sdk_dir]
    unique: list[Path] = []
    for folder in found:
        if folder not in SHARED_FOLDERS and folder not in unique:
            unique.append(folder)
    return tuple(unique)


def _refuse(code: str, scope: Scope, why: str) -> DreamerError:
    return DreamerError(code, f"{scope.text} cannot be used: {why}", scope=scope.text)


def checked_folder(scope: Scope, home: Path) -> Path:
    """The canonical folder a `fs:` / `fs.ro:` scope names, or one sentence why it may not be bound."""
    text = scope.target or ""
    if ".." in text.split("/"):
        raise _refuse("invalid_argument", scope, "a granted path may not contain '..'")
    # normpath keeps a leading '//' (POSIX lets it mean something else); nothing else does.
    named = "/" + os.path.normpath(text).lstrip("/")
    real = Path(os.path.realpath(named))
    if not real.exists():
        raise _refuse("invalid_argument", scope, f"{named} does not exist")
    if not real.is_dir():
        raise _refuse("invalid_argument", scope, f"{named} is not a folder")
    if str(real) != named:
        raise _refuse(
            "permission_denied", scope,
            f"{named} leads through a symbolic link to {real}; grant the real folder instead",
        )
    if real in SHARED_FOLDERS:
        raise _refuse("permission_denied", scope, f"{real} holds the files of the whole system; grant a folder inside it")
    if any(real == tree or real.is_relative_to(tree) for tree in SYSTEM_TREES):
        raise _refuse("permission_denied", scope, f"{real} is a system folder")
    dreamer_home = home.resolve()
    if how := relation(real, dreamer_home):
        raise _refuse(
            "permission_denied", scope,
            f"{real} {how} dreamer's own data folder {dreamer_home}, which agents never see",
        )
    if scope.kind == "fs":
        for folder in program_folders():
            if how := relation(real, folder):
                raise _refuse(
                    "permission_denied", scope,
                    f"{real} {how} dreamer's own program folder {folder}; grant it read-only (fs.ro:) instead",
                )
    return real


def _unique(name: str, used: set[str]) -> str:
    candidate, n = name, 1
    while candidate in used:
        n += 1
        candidate = f"{name}-{n}"
    used.add(candidate)
    return candidate


class FolderCheck(Protocol):
    """Decides whether one user may open a folder (kernel/permissions/folders.py)."""

    def check(self, scope: Scope) -> Path: ...


def mounts_for(grants: Iterable[str], bounds: FolderCheck) -> list[Mount]:
    """The mounts for an agent's granted scopes (others are ignored), each folder checked
    by `bounds`: the user's allowed roots, then checked_folder().

    One folder granted both ways is bound once, writable. Targets follow the sorted
    folder paths, so the same grants always give the same `/mnt/<name>`.
    """
    writable: dict[Path, bool] = {}
    for text in sorted(set(grants)):
        try:
            scope = parse_scope(text)
        except ScopeError as exc:
            raise DreamerError("invalid_argument", str(exc)) from None
        if scope.kind not in FS_KINDS or scope.is_chooser:
            continue
        folder = bounds.check(scope)
        writable[folder] = writable.get(folder, False) or scope.kind == "fs"
    used: set[str] = set()
    return [
        Mount(source=folder, target=f"{MOUNT_ROOT}/{_unique(folder.name, used)}", writable=writable[folder])
        for folder in sorted(writable, key=str)
    ]


def fs_grants(grants: Iterable[str]) -> list[str]:
    """The `fs:` / `fs.ro:` scopes among granted ones, sorted (what a worker's mounts depend on)."""
    return sorted({g for g in grants if g.startswith(("fs:", "fs.ro:"))})


def scope_of(mount: Mount) -> str:
    return f"{'fs' if mount.writable else 'fs.ro'}:{mount.source}"


def mounts_env(mounts: Sequence[Mount], *, remapped: bool = True) -> str:
    """DREAMER_MOUNTS: JSON {where the agent finds the folder: the scope that granted it}.

    `remapped=False` is for backends that cannot show a folder elsewhere (`none`):
    the agent then finds it at its host path.
    """
    return json.dumps({(m.target if remapped else str(m.source)): scope_of(m) for m in mounts}, sort_keys=True)


def check_target(target: str) -> None:
    """A target is one folder directly in /mnt: it can cover nothing of the sandbox's own."""
    name = target.removeprefix(MOUNT_ROOT + "/")
    if name == target or not name or "/" in name or name in (".", "..") or "\0" in name:
        raise DreamerError("internal", f"mount target {target!r} is not a folder directly in {MOUNT_ROOT}")


def pin(mounts: Sequence[Mount]) -> list[int]:
    """Open each mount's folder and check that it still is the folder that was checked.

    The bind then goes through /proc/self/fd/N: whatever happens to the path
    afterwards, the sandbox gets the folder that passed the checks. O_PATH opens
    nothing for reading; it only holds on to the folder.
    """
    fds: list[int] = []
    try:
        for mount in mounts:
            try:
                fd = os.open(mount.source, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError as error:
                raise DreamerError(
                    "invalid_argument", f"the granted folder {mount.source} cannot be opened: {error.strerror}"
                ) from None
            fds.append(fd)
            if os.readlink(f"/proc/self/fd/{fd}") != str(mount.source):
                raise DreamerError(
                    "permission_denied", f"the granted folder {mount.source} was replaced while the sandbox started"
                )
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return fds
