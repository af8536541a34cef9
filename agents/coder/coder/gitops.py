"""diff and commit: what the agent changed, through git when the workspace is a repository."""

from __future__ import annotations

import difflib
import json
import subprocess

from .shell import command_env, run_argv
from .workspace import ToolError, Workspace, save_json, state_dir

MAX_DIFF_CHARS = 200_000


def is_git(ws: Workspace) -> bool:
    return (ws.root / ".git").exists()


def _git(ws: Workspace, *args: str, timeout: float = 60) -> dict:
    # safe.directory: the repository belongs to the user on the host, who is
    # someone else inside the sandbox's user namespace.
    return run_argv(["git", "-c", "safe.directory=*", "-c", "core.quotepath=off", *args], ws.root, timeout)


def diff(ws: Workspace) -> dict:
    """Changes against the last commit (new files included), or against the files as first read."""
    if is_git(ws):
        done = _git(ws, "diff", "--no-color", "--no-ext-diff", "HEAD")
        if done["exit_code"] != 0:  # no commit yet
            done = _git(ws, "diff", "--no-color", "--no-ext-diff")
        stat = _git(ws, "diff", "--no-color", "--numstat", "HEAD")
        changed = [line.split("\t")[-1] for line in stat["output"].splitlines() if line.count("\t") >= 2]
        # New files: diffed here rather than with `git add -N`, which would change the user's index.
        untracked = _git(ws, "ls-files", "--others", "--exclude-standard", "-z")
        parts = [done["output"]]
        for rel in [f for f in untracked["output"].split("\0") if f][:200]:
            path = ws.root / rel
            try:
                after = path.read_text("utf-8") if path.stat().st_size <= MAX_DIFF_CHARS else "(large file)\n"
            except (OSError, UnicodeDecodeError):
                after = "(binary file)\n"
            changed.append(rel)
            parts.append("".join(difflib.unified_diff([], after.splitlines(True), "/dev/null", f"b/{rel}")))
        text = "".join(parts)
        if len(text) > MAX_DIFF_CHARS:
            text = text[:MAX_DIFF_CHARS] + f"\n... [diff cut at {MAX_DIFF_CHARS} characters]\n"
        return {"diff": text, "files": changed, "git": True}
    return _snapshot_diff(ws)


def _snapshot_file(ws: Workspace):
    return state_dir() / f"originals-{ws.key}.json"


def remember_original(ws: Workspace, rel: str, before: str) -> None:
    """Outside git the first version of each changed file is kept, for diff()."""
    if is_git(ws):
        return
    path = _snapshot_file(ws)
    try:
        originals = json.loads(path.read_text())
    except (OSError, ValueError):
        originals = {}
    if rel not in originals:
        originals[rel] = before
        save_json(path, originals)


def _snapshot_diff(ws: Workspace) -> dict:
    try:
        originals = json.loads(_snapshot_file(ws).read_text())
    except (OSError, ValueError):
        originals = {}
    parts, changed = [], []
    for rel, before in sorted(originals.items()):
        path = ws.root / rel
        after = path.read_text("utf-8", "replace") if path.exists() else ""
        if after != before:
            changed.append(rel)
            parts.extend(difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{rel}", f"b/{rel}"))
    return {"diff": "".join(parts)[:MAX_DIFF_CHARS], "files": changed, "git": False}


def commit(ws: Workspace, message: str) -> dict:
    """Commit every change in the workspace (the function that calls this is confirm=True)."""
    ws.check_writable()
    if not is_git(ws):
        raise ToolError("not_a_repository", "the workspace is not a git repository; there is nothing to commit to")
    if not isinstance(message, str) or not message.strip():
        raise ToolError("invalid_argument", "give a commit message")
    _git(ws, "add", "-A")
    env = command_env()
    done = subprocess.run(
        ["git", "-c", "safe.directory=*", "-c", "user.name=" + env.get("GIT_AUTHOR_NAME", "dreamer coder"),
         "-c", "user.email=coder@dreamer.local", "commit", "-q", "-m", message],
        cwd=ws.root, env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    if done.returncode != 0:
        raise ToolError("commit_failed", f"git commit failed: {(done.stderr or done.stdout).strip()[:300]}")
    head = _git(ws, "rev-parse", "HEAD")["output"].strip()
    return {"commit": head, "message": message}
