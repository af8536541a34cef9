"""grep and glob over the workspace, bounded in files read and matches returned."""

from __future__ import annotations

import fnmatch
import re

from .workspace import MAX_TEXT_BYTES, ToolError, Workspace

MAX_MATCHES = 200
MAX_PATTERN = 500


def _matcher(pattern: str | None):
    if pattern is None or pattern == "":
        return None
    if not isinstance(pattern, str):
        raise ToolError("invalid_argument", "a glob pattern must be a string")
    # "**/" may match no folder at all, as in git and most shells.
    variants = {pattern, pattern.replace("**/", "")}

    def match(rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatchcase(rel, p) or ("/" not in p and fnmatch.fnmatchcase(name, p)) for p in variants)

    return match


def glob(ws: Workspace, pattern: str, limit: int = 500) -> dict:
    """Files whose path (relative to the root) matches `pattern` (`*.py`, `src/**/*.ts`)."""
    match = _matcher(pattern)
    if match is None:
        raise ToolError("invalid_argument", "give a pattern such as '*.py' or 'src/**/*.ts'")
    files, cut = ws.walk()
    found = [ws.rel(p) for p in files if match(ws.rel(p))]
    return {"files": found[:limit], "count": len(found), "truncated": cut or len(found) > limit}


def grep(ws: Workspace, pattern: str, glob: str | None = None, limit: int = MAX_MATCHES) -> dict:
    """Lines matching the regular expression `pattern`, as path:line: text."""
    if not isinstance(pattern, str) or not pattern:
        raise ToolError("invalid_argument", "give a regular expression to search for")
    if len(pattern) > MAX_PATTERN:
        raise ToolError("invalid_argument", f"the pattern is longer than {MAX_PATTERN} characters")
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolError("invalid_argument", f"the pattern is not a valid regular expression: {exc}") from None
    match = _matcher(glob)
    files, cut = ws.walk()
    hits: list[str] = []
    total = 0
    skipped = 0
    for path in files:
        rel = ws.rel(path)
        if match is not None and not match(rel):
            continue
        try:
            if path.stat().st_size > MAX_TEXT_BYTES:
                skipped += 1
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        text = data.decode("utf-8", "replace")
        for number, line in enumerate(text.splitlines(), 1):
            if regex.search(line):
                total += 1
                if len(hits) < limit:
                    hits.append(f"{rel}:{number}: {line[:300]}")
    return {"matches": hits, "count": total, "truncated": total > limit or cut, "skipped_large_files": skipped}
