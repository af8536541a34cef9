"""Which host folders one user may open to an agent: the administrator's allowed roots.

`kernel/sandbox/mounts.py` refuses what no one may bind (the system, $DREAMER_HOME,
writable program folders). This module adds the bound per user, checked when a folder
is granted and again when a worker binds it (a root may have been taken away since):

- an ordinary user may grant only folders inside one of their allowed roots
  (`DREAMER_FS_ROOTS`, default `/home/{user}`), never one that is, holds or sits in
  another user's root (unless that root is theirs too, a share), nor anything of
  dreamer's installation (even read-only), nor the kernel's own home folder;
- the administrator is not bounded by roots, and each of their grants says plainly
  what it opens (`opens`), e.g. that the folder holds another user's root.

Containment is decided twice: on the canonical path, and on the folder's identity
in its filesystem (device and path inside it, from /proc/self/mountinfo), so a bind
mount of /etc or of dreamer's code placed inside a user's root is still recognised.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from dreamer.kernel.config import Settings
from dreamer.contracts.errors import DreamerError
from dreamer.contracts.scopes import Scope
from dreamer.kernel.sandbox.mounts import SYSTEM_TREES, checked_folder, program_folders, relation
from dreamer.kernel.store.models import User

USER_PLACEHOLDER = "{user}"


def installation_folders() -> tuple[Path, ...]:
    return program_folders()


def _unescape(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as \\ooo."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 3 < len(text) and text[i + 1 : i + 4].isdigit():
            out.append(chr(int(text[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _mounts() -> list[tuple[str, str, str]]:
    """(device, root inside the filesystem, mount point) of each mount, in mount order."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    rows = []
    for line in lines:
        fields = line.split(" ")
        if len(fields) >= 5:
            rows.append((fields[2], _unescape(fields[3]), _unescape(fields[4])))
    return rows


def identity(folder: Path, mounts: list[tuple[str, str, str]]) -> tuple[str, Path]:
    """The filesystem a canonical folder lives on and its path inside it: a bind mount
    shows the same identity at two places."""
    best: tuple[str, str, str] | None = None
    for row in mounts:  # a later mount on the same point covers an earlier one
        point = Path(row[2])
        if folder == point or folder.is_relative_to(point):
            if best is None or len(row[2]) >= len(best[2]):
                best = row
    if best is None:
        return ("", folder)
    rest = folder.relative_to(best[2])
    return (best[0], Path(best[1]) / rest)


def _related(folder: Path, other: Path, mounts: list[tuple[str, str, str]]) -> str | None:
    """relation() by path, else by filesystem identity (bind mounts)."""
    if found := relation(folder, other):
        return found
    mine, theirs = identity(folder, mounts), identity(other.resolve(), mounts)
    if mine[0] and mine[0] == theirs[0] and (found := relation(mine[1], theirs[1])):
        return f"{found} (through a bind mount)"
    return None


def roots_of(settings: Settings, user: str) -> tuple[Path, ...]:
    """The allowed roots the administrator configured for `user`."""
    roots: list[Path] = []
    for entry in settings.fs_roots:
        owner, _, path = entry.rpartition("=")
        if owner and owner != user:
            continue
        root = Path(os.path.realpath(path.replace(USER_PLACEHOLDER, user)))
        if root not in roots:
            roots.append(root)
    return tuple(roots)


@dataclass(frozen=True)
class FolderBounds:
    """What one user may open: their allowed roots, and the roots of everyone else."""

    user: str
    is_admin: bool
    home: Path  # $DREAMER_HOME
    own_roots: tuple[Path, ...] = ()
    others_roots: tuple[tuple[str, Path], ...] = field(default=())

    def check(self, scope: Scope) -> Path:
        """The canonical folder `scope` names if this user may open it, else one sentence why not."""
        # Read-only first: an ordinary user is told the installation is not theirs to open,
        # not to "grant it read-only instead".
        folder = checked_folder(Scope(text=scope.text, kind="fs.ro", target=scope.target), self.home)
        mounts = _mounts()
        # The filesystem-identity view of what mounts.py checks by path: a bind mount of
        # the system or of $DREAMER_HOME elsewhere is the same folder.
        for tree in (*SYSTEM_TREES, self.home):
            if tree.exists() and (found := _related(folder, tree, mounts)) and "bind" in found:
                raise _refuse(scope, f"{folder} {found} {tree}, which agents never see")
        if self.is_admin:
            return checked_folder(scope, self.home)  # writable program folders: no one
        for tree in installation_folders():
            if found := _related(folder, tree, mounts):
                raise _refuse(scope, f"{folder} {found} dreamer's own installation folder {tree}")
        for private in {Path("/root"), Path.home().resolve()}:
            if found := _related(folder, private, mounts):
                raise _refuse(scope, f"{folder} {found} the kernel's own home folder {private}")
        for owner, root in self.others_roots:
            if root in self.own_roots:
                continue
            if found := _related(folder, root, mounts):
                raise _refuse(scope, f"{folder} {found} {owner}'s folder {root}")
        if not any(folder == root or folder.is_relative_to(root) for root in self.own_roots):
            allowed = ", ".join(str(r) for r in self.own_roots) or "none"
            raise _refuse(
                scope,
                f"{folder} is outside the folders the administrator lets {self.user} grant ({allowed}); "
                "ask them to add it to DREAMER_FS_ROOTS",
            )
        return checked_folder(scope, self.home)

    def opens(self, scope: Scope) -> str:
        """One plain sentence of what granting `scope` opens (the administrator's grants
        say whose files they reach)."""
        folder = self.check(scope)
        how = "read and change" if scope.kind == "fs" else "read"
        sentence = f"The agent can {how} every file in {folder}"
        if not self.is_admin:
            return sentence + "."
        notes = []
        mounts = _mounts()
        for owner, root in self.others_roots:
            if found := _related(folder, root, mounts):
                notes.append(f"{found} {owner}'s folder {root}")
        for tree in installation_folders():
            if found := _related(folder, tree, mounts):
                notes.append(f"{found} dreamer's own installation folder {tree}")
                break
        if not any(folder == r or folder.is_relative_to(r) for r in (*self.own_roots, *(r for _, r in self.others_roots))):
            notes.append("is outside every user's allowed folders")
        return sentence + (": it " + "; it ".join(notes) + "." if notes else ".")


def _refuse(scope: Scope, why: str) -> DreamerError:
    return DreamerError("permission_denied", f"{scope.text} cannot be used: {why}", scope=scope.text)


def bounds_for(settings: Settings, session: Session, user_id: int) -> FolderBounds:
    """The bounds of one user, read from the users table and DREAMER_FS_ROOTS."""
    users = list(session.execute(select(User.id, User.name, User.is_admin)))
    me = next((u for u in users if u.id == user_id), None)
    if me is None:
        raise DreamerError("not_found", f"no user with id {user_id}")
    others = tuple((u.name, root) for u in users if u.id != user_id for root in roots_of(settings, u.name))
    return FolderBounds(
        user=me.name, is_admin=bool(me.is_admin), home=settings.home.resolve(),
        own_roots=roots_of(settings, me.name), others_roots=others,
    )
