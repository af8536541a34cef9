"""The files tool server: a per-user document folder (/data/documents) over MCP stdio.

Paths are relative to the folder; `..`, absolute paths and links are refused before
any file is touched (the sandbox would stop an escape anyway: it shows nothing else).
Only text is read and written, at most MAX_BYTES per file.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

ROOT = Path(os.environ.get("DREAMER_DATA_DIR", "/data")) / "documents"
MAX_BYTES = 1024 * 1024
MAX_RESULTS = 200

server = MCPServer("files", instructions="The user's documents. Paths are relative to their document folder.")


def _path(relative: str, *, must_exist: bool = True) -> Path:
    ROOT.mkdir(parents=True, exist_ok=True)
    if not isinstance(relative, str) or "\0" in relative or relative.startswith("/") or ".." in Path(relative).parts:
        raise ToolError("a path is relative to the document folder and may not contain '..'")
    path = ROOT / relative
    for part in [path, *path.parents]:
        if part == ROOT.parent:
            break
        if part.is_symlink():
            raise ToolError(f"{relative!r} goes through a link, which the document folder does not follow")
    if must_exist and not path.exists():
        raise ToolError(f"there is no {relative!r} in the document folder")
    return path


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def list_files(folder: str = "") -> dict:
    """The files and folders in a folder of the document folder ('' is its top)."""
    base = _path(folder) if folder else _path("", must_exist=False)
    if not base.is_dir():
        raise ToolError(f"{folder!r} is not a folder")
    entries = []
    for child in sorted(base.iterdir())[:MAX_RESULTS]:
        if child.is_symlink():
            continue
        entries.append({"path": _rel(child), "folder": child.is_dir(), "bytes": child.stat().st_size if child.is_file() else None})
    return {"entries": entries}


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def read_file(path: str) -> dict:
    """The text of a file in the document folder."""
    target = _path(path)
    if not target.is_file():
        raise ToolError(f"{path!r} is not a file")
    if target.stat().st_size > MAX_BYTES:
        raise ToolError(f"{path!r} is larger than {MAX_BYTES // 1024} KiB")
    try:
        return {"path": path, "text": target.read_text(encoding="utf-8")}
    except UnicodeDecodeError:
        raise ToolError(f"{path!r} is not UTF-8 text") from None


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False))
def write_file(path: str, text: str) -> dict:
    """Write text to a file in the document folder, replacing what it held; folders are made as needed."""
    target = _path(path, must_exist=False)
    data = text.encode("utf-8")
    if len(data) > MAX_BYTES:
        raise ToolError(f"the text is larger than {MAX_BYTES // 1024} KiB")
    if target.is_dir():
        raise ToolError(f"{path!r} is a folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    return {"path": path, "bytes": len(data)}


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def search_files(query: str) -> dict:
    """Files whose name or text contains the query (case-insensitive), with the first matching line."""
    needle = query.strip().lower()
    if not needle:
        raise ToolError("the query cannot be empty")
    ROOT.mkdir(parents=True, exist_ok=True)
    hits = []
    for path in sorted(ROOT.rglob("*")):
        if len(hits) >= MAX_RESULTS:
            break
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        line = next((ln.strip() for ln in text.splitlines() if needle in ln.lower()), None)
        if line is not None or needle in path.name.lower():
            hits.append({"path": _rel(path), "line": line[:300] if line else None})
    return {"matches": hits}


if __name__ == "__main__":
    server.run()
