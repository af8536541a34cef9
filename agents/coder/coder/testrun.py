"""test: run the workspace's tests; pytest when the repository uses it."""

from __future__ import annotations

import importlib.util
import re

from .shell import python_argv, run_argv
from .workspace import Workspace

TEST_TIMEOUT_S = 120.0
SUMMARY_RE = re.compile(r"^=*\s*(.*\b(passed|failed|error|errors|no tests ran)\b.*?)\s*=*$", re.MULTILINE)


def uses_pytest(ws: Workspace) -> bool:
    root = ws.root
    if any((root / name).exists() for name in ("pytest.ini", "conftest.py", "tests/conftest.py")):
        return True
    for name in ("pyproject.toml", "setup.cfg", "tox.ini"):
        path = root / name
        try:
            if path.exists() and re.search(r"\[(tool:)?pytest|\[tool\.pytest", path.read_text("utf-8", "replace")):
                return True
        except OSError:
            pass
    files, _ = ws.walk(limit=5000)
    return any(p.name.startswith("test_") and p.suffix == ".py" or p.name.endswith("_test.py") for p in files)


def detect(ws: Workspace) -> list[str] | None:
    """The test command for this workspace, or None when there is nothing recognised to run."""
    if uses_pytest(ws) and importlib.util.find_spec("pytest") is not None:
        # -p no:cacheprovider: write nothing into the user's repository.
        return python_argv("-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--no-header")
    if any(p.suffix == ".py" for p in ws.walk(limit=5000)[0]):
        return python_argv("-m", "unittest", "discover", "-q")
    return None


def test(ws: Workspace, cmd: str | None = None, timeout: float = TEST_TIMEOUT_S) -> dict:
    """Run `cmd` (a shell command) or the detected test command; say whether it passed."""
    if cmd:
        result = run_argv(cmd, ws.root, timeout, shell=True)
        command = cmd
    else:
        argv = detect(ws)
        if argv is None:
            return {"passed": False, "command": None, "exit_code": None, "summary": "no tests found: give the command to run, e.g. test('make test')", "output": ""}
        result = run_argv(argv, ws.root, timeout)
        command = " ".join(["python", *argv[2:]])
    found = SUMMARY_RE.findall(result["output"])
    summary = found[-1][0] if found else ("timed out" if result["timed_out"] else f"exit code {result['exit_code']}")
    return {"passed": result["exit_code"] == 0, "command": command, "exit_code": result["exit_code"], "summary": summary,
            "output": result["output"], "timed_out": result["timed_out"]}
