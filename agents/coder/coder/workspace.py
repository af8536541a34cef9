"""A workspace: one folder the agent works in, and the only place it reads or writes.

A workspace is either a folder the user granted (`fs:<path>`, seen at /mnt/<name>)
or a copy the agent made in its own data (/data/workspaces/<name>). Every path a
tool receives is resolved here: relative to the root, symlinks followed, and
refused when the real path is not inside the root. The sandbox already keeps the
agent away from everything else; this keeps a tool from wandering into another
granted folder or into the agent's own state.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

# Folders no tool descends into: version control internals and caches are never
# what a person means by "the code", and some hold thousands of files.
SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", "node_modules",
    ".venv", "venv", ".tox", ".nox", "dist", "build", ".eggs",
})
MAX_TEXT_BYTES = 2 * 1024 * 1024  # a file larger than this is not read or edited as text
MAX_WALK_FILES = 50_000  # past this many files a walk stops and says so
NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")


class ToolError(Exception):
    """A tool refused or failed: one sentence that says what to do instead."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def data_dir() -> Path:
    return Path(os.environ.get("DREAMER_DATA_DIR") or "/data")


def state_dir() -> Path:
    """The agent's own bookkeeping (indexes, read hashes, todos): never inside a workspace."""
    path = data_dir() / "coder"
    path.mkdir(parents=True, exist_ok=True)
    return path


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def save_json(path: Path, value: object) -> None:
    """Replace a state file whole; the temporary name is unique, because up to four
    workers of this agent (and threads of one) may write the same file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(value))
    tmp.replace(path)


@dataclass(frozen=True)
class Workspace:
    root: Path  # canonical, existing folder
    name: str
    source: str  # "mount:/mnt/x" or "clone:<what was cloned>"
    writable: bool = True

    @property
    def key(self) -> str:
        """A stable file-name-safe id for this workspace's state files."""
        return f"{self.name}-{sha256(str(self.root).encode())[:10]}"

    def resolve(self, path: str | os.PathLike[str] = ".", *, must_exist: bool = False) -> Path:
        """The canonical path of `path` (relative to the root, or absolute inside it)."""
        if not isinstance(path, (str, os.PathLike)):
            raise ToolError("invalid_argument", "a path must be a string")
        text = os.fspath(path)
        if "\0" in text:
            raise ToolError("invalid_argument", "a path may not contain a NUL byte")
        if text.strip() == "":
            text = "."
        candidate = Path(text)
        joined = candidate if candidate.is_absolute() else self.root / candidate
        real = Path(os.path.realpath(joined))
        if real != self.root and not real.is_relative_to(self.root):
            raise ToolError(
                "outside_workspace",
                f"{text} is outside the workspace {self.root}; give a path inside it (relative paths start at its root)",
            )
        if must_exist and not real.exists():
            raise ToolError("not_found", f"{self.rel(real)} does not exist in the workspace; use glob() to find files")
        return real

    def rel(self, path: Path) -> str:
        return "." if path == self.root else str(path.relative_to(self.root))

    def check_writable(self) -> None:
        if not self.writable:
            raise ToolError("read_only", f"the workspace {self.root} is granted read-only (fs.ro:); ask for an fs: grant to change it")

    def walk(self, limit: int = MAX_WALK_FILES) -> tuple[list[Path], bool]:
        """Regular files under the root (skipping SKIP_DIRS and symlinks), sorted; and whether the walk was cut short."""
        found: list[Path] = []
        stack = [self.root]
        while stack:
            folder = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
            except OSError:
                continue
            for entry in entries:
                if entry.is_symlink() or not _printable(entry.name):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS:
                        stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    found.append(Path(entry.path))
                    if len(found) >= limit:
                        return sorted(found), True
        return sorted(found), False


def _printable(name: str) -> bool:
    """A name the tools can report: UTF-8 (not undecodable bytes) without control characters.
    Others are skipped by walks rather than breaking every answer that would list them."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return name.isprintable()


def mount_workspaces() -> list[Workspace]:
    """The folders the user granted, as workspaces (from DREAMER_MOUNTS)."""
    try:
        mounts = json.loads(os.environ.get("DREAMER_MOUNTS") or "{}")
    except ValueError:
        mounts = {}
    out: list[Workspace] = []
    for where, scope in sorted(mounts.items()) if isinstance(mounts, dict) else []:
        root = Path(os.path.realpath(where))
        if root.is_dir():
            writable = str(scope).startswith("fs:")
            out.append(Workspace(root=root, name=root.name, source=f"mount:{where}", writable=writable))
    return out


def clones_dir() -> Path:
    path = data_dir() / "workspaces"
    path.mkdir(parents=True, exist_ok=True)
    return path


def clone_workspaces() -> list[Workspace]:
    folder = clones_dir()
    out = []
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
            try:
                source = (folder / f".{child.name}.source").read_text()
            except OSError:
                source = "clone"
            out.append(Workspace(root=child.resolve(), name=child.name, source=f"clone:{source}"))
    return out


def all_workspaces() -> list[Workspace]:
    return mount_workspaces() + clone_workspaces()


def _current_file() -> Path:
    return state_dir() / "current.json"


def set_current(ws: Workspace) -> None:
    save_json(_current_file(), {"root": str(ws.root)})


def current() -> Workspace:
    """The workspace tools act on: the one chosen last, else the only one there is."""
    known = all_workspaces()
    try:
        chosen = json.loads(_current_file().read_text()).get("root")
    except (OSError, ValueError, AttributeError):
        chosen = None
    for ws in known:
        if str(ws.root) == chosen:
            return ws
    if len(known) == 1:
        return known[0]
    if not known:
        raise ToolError(
            "no_workspace",
            "coder has no workspace: grant it a folder (dreamer grant coder fs:/path/to/repo) or call open_workspace with a path or URL to clone",
        )
    names = ", ".join(ws.name for ws in known)
    raise ToolError("no_workspace", f"coder has several workspaces ({names}); choose one with open_workspace(name)")


def find(name: str) -> Workspace | None:
    for ws in all_workspaces():
        if name in (ws.name, str(ws.root), ws.source.removeprefix("mount:")):
            return ws
    return None
