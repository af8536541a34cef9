"""read, edit, write: text files of the workspace, with a ledger of what was read.

The ledger keeps the sha256 of each file as the agent last read or wrote it. An
edit of a file whose content has changed since (the user saved it in their
editor, a formatter ran) is refused: the agent's idea of the file is stale and
its edit would be made against text it has not seen.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .workspace import (
    MAX_TEXT_BYTES,
    ToolError,
    Workspace,
    save_json,
    sha256,
    state_dir,
)

DEFAULT_LIMIT = 400  # lines a read returns unless asked
MAX_LINE_CHARS = 2000  # a longer line is cut in what read returns
MAX_LIMIT = 2000
_LEDGER_LOCK = threading.Lock()  # parallel reads of one task note into the same ledger file


def _looks_binary(data: bytes) -> bool:
    return b"\0" in data[:8192]


def load_text(ws: Workspace, path: Path) -> tuple[str, bytes]:
    """The file's text and raw bytes, or a clear refusal for folders, binaries and huge files."""
    rel = ws.rel(path)
    if not path.exists():
        raise ToolError("not_found", f"{rel} does not exist in the workspace; use glob() to find files")
    if not path.is_file():
        raise ToolError("invalid_argument", f"{rel} is not a file; use glob('{rel}/*') to list it")
    size = path.stat().st_size
    if size > MAX_TEXT_BYTES:
        raise ToolError("too_large", f"{rel} is {size} bytes, over the {MAX_TEXT_BYTES}-byte limit for text tools; use grep() or run('head ...')")
    data = path.read_bytes()
    if _looks_binary(data):
        raise ToolError("binary", f"{rel} is a binary file; text tools do not read or change it")
    try:
        return data.decode("utf-8"), data
    except UnicodeDecodeError:
        raise ToolError("binary", f"{rel} is not UTF-8 text; text tools do not read or change it") from None


@dataclass
class Ledger:
    """What the agent last saw of each file: {relative path: sha256}."""

    ws: Workspace
    seen: dict[str, str] = field(default_factory=dict)

    @property
    def file(self) -> Path:
        return state_dir() / f"reads-{self.ws.key}.json"

    @classmethod
    def load(cls, ws: Workspace) -> Ledger:
        ledger = cls(ws)
        try:
            data = json.loads(ledger.file.read_text())
            if isinstance(data, dict):
                ledger.seen = {str(k): str(v) for k, v in data.items()}
        except (OSError, ValueError):
            pass
        return ledger

    def save(self) -> None:
        save_json(self.file, self.seen)

    def note(self, rel: str, data: bytes) -> None:
        with _LEDGER_LOCK:
            self.seen = {**Ledger.load(self.ws).seen, rel: sha256(data)}
            self.save()

    def check_fresh(self, rel: str, data: bytes) -> None:
        known = self.seen.get(rel)
        if known is not None and known != sha256(data):
            raise ToolError(
                "changed_underneath",
                f"{rel} changed since it was last read; read it again before editing it",
            )


def read(ws: Workspace, path: str, offset: int = 1, limit: int = DEFAULT_LIMIT) -> dict:
    """Lines offset.. (1-based) numbered like `cat -n`; says how many lines the file has."""
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 1:
        raise ToolError("invalid_argument", "offset is the first line to show, a whole number from 1")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ToolError("invalid_argument", "limit is how many lines to show, a whole number from 1")
    limit = min(limit, MAX_LIMIT)
    real = ws.resolve(path)
    text, data = load_text(ws, real)
    rel = ws.rel(real)
    Ledger.load(ws).note(rel, data)
    lines = text.splitlines()
    shown = lines[offset - 1 : offset - 1 + limit]
    width = len(str(offset + len(shown)))
    out = []
    for number, line in enumerate(shown, start=offset):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"... [{len(line) - MAX_LINE_CHARS} more characters]"
        out.append(f"{number:>{width}}\t{line}")
    end = offset + len(shown) - 1
    return {"path": rel, "content": "\n".join(out), "first_line": offset, "last_line": end, "total_lines": len(lines),
            "more": end < len(lines)}


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _atomic_write(path: Path, data: bytes) -> None:
    """Write next to the file and rename: a failure leaves the old file whole."""
    tmp = path.with_name(f".{path.name}.coder-tmp")
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def edit(ws: Workspace, path: str, old: str, new: str, replace_all: bool = False) -> dict:
    """Replace the exact text `old` by `new`; `old` must occur once unless replace_all."""
    ws.check_writable()
    if not isinstance(old, str) or not isinstance(new, str):
        raise ToolError("invalid_argument", "old and new must be strings")
    if old == "":
        raise ToolError("invalid_argument", "old may not be empty; use write() to create or replace a whole file")
    if old == new:
        raise ToolError("invalid_argument", "old and new are the same; there is nothing to change")
    real = ws.resolve(path)
    text, data = load_text(ws, real)
    rel = ws.rel(real)
    ledger = Ledger.load(ws)
    ledger.check_fresh(rel, data)
    count = text.count(old)
    if count == 0:
        hint = ""
        stripped = old.strip()
        if stripped and stripped in text:
            hint = f"; the text without its leading/trailing whitespace occurs at line {_line_of(text, text.index(stripped))}, so check indentation"
        raise ToolError("no_match", f"the text to replace was not found in {rel} (0 matches){hint}; read the file and copy the text exactly")
    if count > 1 and not replace_all:
        lines, start = [], 0
        while (found := text.find(old, start)) != -1:
            lines.append(_line_of(text, found))
            start = found + 1
        where = ", ".join(str(n) for n in lines[:20])
        raise ToolError("several_matches", f"the text to replace occurs {count} times in {rel} (lines {where}); add surrounding lines to make it unique, or pass replace_all=true")
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    encoded = updated.encode("utf-8")
    _atomic_write(real, encoded)
    ledger.note(rel, encoded)
    first = _line_of(text, text.index(old))
    return {"path": rel, "replaced": count if replace_all else 1, "line": first, "before": text, "after": updated}


def write(ws: Workspace, path: str, content: str) -> dict:
    """Create or replace a whole file (folders are made as needed)."""
    ws.check_writable()
    if not isinstance(content, str):
        raise ToolError("invalid_argument", "content must be a string")
    encoded = content.encode("utf-8")
    if len(encoded) > MAX_TEXT_BYTES:
        raise ToolError("too_large", f"content is {len(encoded)} bytes, over the {MAX_TEXT_BYTES}-byte limit")
    real = ws.resolve(path)
    rel = ws.rel(real)
    if real.is_dir():
        raise ToolError("invalid_argument", f"{rel} is a folder; give a file path")
    ledger = Ledger.load(ws)
    before = ""
    existed = real.exists()
    if existed:
        before, data = load_text(ws, real)
        ledger.check_fresh(rel, data)
    # Parents are made one by one from the root, each checked, so a link planted
    # in the middle of the path cannot carry the write outside.
    parent = ws.root
    for part in real.relative_to(ws.root).parts[:-1]:
        parent = parent / part
        if parent.is_symlink():
            raise ToolError("outside_workspace", f"{ws.rel(parent)} is a link; write through its real path")
        parent.mkdir(exist_ok=True)
    _atomic_write(real, encoded)
    ledger.note(rel, encoded)
    return {"path": rel, "bytes": len(encoded), "created": not existed, "before": before, "after": content}
