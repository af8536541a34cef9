"""The tools, one place: what the exported functions and the model's toolset both call.

Each tool takes the workspace and plain arguments and returns a JSON-able dict,
or raises ToolError. Edits and writes also refresh the index for their file,
keep the original (outside git, for diff), and report the lint errors they
introduced.
"""

from __future__ import annotations

from . import files, finder, gitops, index, lint, shell, testrun, todo
from .workspace import Workspace


def read(ws: Workspace, path: str, offset: int = 1, limit: int = files.DEFAULT_LIMIT) -> dict:
    return files.read(ws, path, offset, limit)


def _after_change(ws: Workspace, result: dict) -> dict:
    rel, before, after = result.pop("path"), result.pop("before"), result.pop("after")
    gitops.remember_original(ws, rel, before)
    index.touch(ws, rel)
    new = lint.introduced(ws, rel, before, after)
    return {"path": rel, **result, "lint": {"introduced": new, "ok": not new}}


def edit(ws: Workspace, path: str, old: str, new: str, replace_all: bool = False) -> dict:
    return _after_change(ws, files.edit(ws, path, old, new, replace_all))


def write(ws: Workspace, path: str, content: str) -> dict:
    return _after_change(ws, files.write(ws, path, content))


def grep(ws: Workspace, pattern: str, glob: str | None = None) -> dict:
    return finder.grep(ws, pattern, glob)


def glob(ws: Workspace, pattern: str) -> dict:
    return finder.glob(ws, pattern)


def search(ws: Workspace, query: str, k: int = 10) -> dict:
    return index.search(ws, query, k)


def run_lint(ws: Workspace, paths: list[str] | None = None) -> dict:
    return lint.lint(ws, paths)


def run(ws: Workspace, cmd: str, timeout: float = shell.DEFAULT_TIMEOUT_S) -> dict:
    return shell.run(ws.root, cmd, timeout)


def test(ws: Workspace, cmd: str | None = None, timeout: float = testrun.TEST_TIMEOUT_S) -> dict:
    return testrun.test(ws, cmd, timeout)


def diff(ws: Workspace) -> dict:
    return gitops.diff(ws)


def todos(ws: Workspace, items: list[dict] | None = None) -> dict:
    return todo.todo(ws, items)


def finish(ws: Workspace, summary: str = "") -> dict:
    changes = gitops.diff(ws)
    return {"summary": summary or f"{len(changes['files'])} file(s) changed", "diff": changes["diff"], "files": changes["files"],
            "todo": todo.load(ws)}
