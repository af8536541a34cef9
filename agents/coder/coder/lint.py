"""lint: ruff for Python, parse checks for JSON, TOML and YAML; and the errors an edit introduced.

ruff runs from the Python prefix the sandbox binds (the kernel's own runtime pins
it), with the workspace's own ruff configuration when it has one and only error
rules (E9, F) when it has none. After an edit
the file is linted twice, as it was (through ruff's stdin) and as it is, and only
the diagnostics that are new are reported, each with the lines around it, so the
model hears about what it broke and not about the file's old debts.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import yaml

from .shell import command_env
from .workspace import MAX_TEXT_BYTES, ToolError, Workspace

RUFF_TIMEOUT_S = 60.0
# Without a ruff configuration of the repository's own: errors only (syntax, pyflakes:
# undefined and unused names, ...), not style the repository never asked for.
DEFAULT_RULES = ["--isolated", "--select", "E9,F"]


def _has_ruff_config(ws: Workspace) -> bool:
    if (ws.root / "ruff.toml").is_file() or (ws.root / ".ruff.toml").is_file():
        return True
    try:
        return "[tool.ruff" in (ws.root / "pyproject.toml").read_text("utf-8", "replace")
    except OSError:
        return False
MAX_REPORTED = 50
PY_SUFFIXES = (".py", ".pyi")


def ruff_command() -> list[str] | None:
    """ruff from the runtime's own bin folder (what the sandbox binds), else on PATH."""
    beside = Path(sys.executable).parent / "ruff"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("ruff", path=command_env()["PATH"])
    return [found] if found else None


def _ruff(ws: Workspace, args: list[str], stdin: str | None = None) -> list[dict]:
    ruff = ruff_command()
    if ruff is None:
        raise ToolError("not_available", "ruff is not installed next to the kernel's Python; install dreamer with its dependencies")
    rules = [] if _has_ruff_config(ws) else DEFAULT_RULES
    argv = [*ruff, "check", "--output-format", "json", "--no-cache", "--exit-zero", "--quiet", *rules, *args]
    try:
        done = subprocess.run(argv, cwd=ws.root, input=stdin, capture_output=True, text=True,
                              timeout=RUFF_TIMEOUT_S, env=command_env(), check=False)
    except subprocess.TimeoutExpired:
        raise ToolError("timeout", f"ruff did not finish within {RUFF_TIMEOUT_S:g} s") from None
    try:
        found = json.loads(done.stdout or "[]")
    except ValueError:
        raise ToolError("lint_failed", f"ruff failed: {(done.stderr or done.stdout).strip()[:300]}") from None
    return found if isinstance(found, list) else []


def _diag(ws: Workspace, item: dict) -> dict:
    filename = Path(item.get("filename") or "")
    try:
        rel = ws.rel(Path(filename).resolve()) if filename.is_absolute() else str(filename)
    except ValueError:
        rel = str(filename)
    loc = item.get("location") or {}
    return {"path": rel, "line": loc.get("row", 0), "column": loc.get("column", 0),
            "code": item.get("code") or "error", "message": item.get("message", "")}


def _parse_check(ws: Workspace, path: Path) -> list[dict]:
    """JSON, TOML and YAML files must at least parse."""
    rel = ws.rel(path)
    try:
        if path.stat().st_size > MAX_TEXT_BYTES:
            return []
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return check_text(rel, text)


def check_text(rel: str, text: str) -> list[dict]:
    suffix = Path(rel).suffix.lower()
    try:
        if suffix == ".json":
            json.loads(text)
        elif suffix == ".toml":
            tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            list(yaml.safe_load_all(text))
    except json.JSONDecodeError as exc:
        return [{"path": rel, "line": exc.lineno, "column": exc.colno, "code": "json", "message": exc.msg}]
    except tomllib.TOMLDecodeError as exc:
        return [{"path": rel, "line": getattr(exc, "lineno", 0) or 0, "column": getattr(exc, "colno", 0) or 0,
                 "code": "toml", "message": str(exc).split(" (at")[0]}]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return [{"path": rel, "line": (mark.line + 1) if mark else 0, "column": (mark.column + 1) if mark else 0,
                 "code": "yaml", "message": str(getattr(exc, "problem", None) or exc)}]
    return []


def lint(ws: Workspace, paths: list[str] | None = None) -> dict:
    """Diagnostics of the given files or folders (the whole workspace without paths)."""
    targets = [ws.resolve(p, must_exist=True) for p in (paths or ["."])]
    py_targets = [str(t) for t in targets if t.is_dir() or t.suffix in PY_SUFFIXES]
    found: list[dict] = []
    if py_targets:
        found += [_diag(ws, item) for item in _ruff(ws, py_targets)]
    for target in targets:
        files = ws.walk()[0] if target == ws.root else ([target] if target.is_file() else
                                                        [p for p in ws.walk()[0] if p.is_relative_to(target)])
        for path in files:
            if path.suffix.lower() in (".json", ".toml", ".yaml", ".yml"):
                found += _parse_check(ws, path)
    found.sort(key=lambda d: (d["path"], d["line"], d["column"]))
    return {"diagnostics": found[:MAX_REPORTED], "count": len(found), "truncated": len(found) > MAX_REPORTED}


def text_diagnostics(ws: Workspace, rel: str, text: str) -> list[dict]:
    """Diagnostics of `text` as if it were the file `rel` (the file itself is not read)."""
    if Path(rel).suffix in PY_SUFFIXES:
        return [_diag(ws, {**item, "filename": rel}) for item in _ruff(ws, ["--stdin-filename", rel, "-"], stdin=text)]
    return check_text(rel, text)


def _context(text: str, line: int, around: int = 2) -> str:
    lines = text.splitlines()
    lo, hi = max(1, line - around), min(len(lines), line + around)
    width = len(str(hi))
    return "\n".join(f"{'>' if n == line else ' '}{n:>{width}}\t{lines[n - 1]}" for n in range(lo, hi + 1))


def introduced(ws: Workspace, rel: str, before: str, after: str) -> list[dict]:
    """Diagnostics of `after` that `before` did not have (matched by code and message,
    so that errors which only moved with the edit's lines are not counted as new)."""
    suffix = Path(rel).suffix.lower()
    if suffix not in (*PY_SUFFIXES, ".json", ".toml", ".yaml", ".yml"):
        return []
    old = Counter((d["code"], d["message"]) for d in text_diagnostics(ws, rel, before)) if before else Counter()
    new: list[dict] = []
    for diag in text_diagnostics(ws, rel, after):
        key = (diag["code"], diag["message"])
        if old[key] > 0:
            old[key] -= 1
            continue
        new.append({**diag, "context": _context(after, diag["line"])})
    return new[:MAX_REPORTED]
