"""Agents that write agents: scaffold_agent (no model) and create_agent (with one).

The bundle starts from the SDK's template (the one `dreamer init` writes), is
written into the workspace, built (functions.json, by importing its entry module
in a child process of this sandbox, as `dreamer build` does in its own) and
tested there. Installing it is the user's step, through the normal install
review: the agent says which command to run, and the review shows the new
agent's permissions like any other's.
"""

from __future__ import annotations

import json
import keyword
import os
import re
from pathlib import Path

import yaml
from dreamer.sdk.templates import bundle_files, module_name

from .files import write as write_file
from .shell import python_argv, run_argv
from .workspace import ToolError, Workspace, all_workspaces, clones_dir, find

AGENT_NAME = re.compile(r"[a-z][a-z0-9-]{1,62}")
MAX_FUNCTIONS = 30
BUILD_TIMEOUT_S = 60.0

_DESCRIBE = """
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
from dreamer.sdk import REGISTRY
importlib.import_module(sys.argv[2])
print(json.dumps({"format": 1, "functions": REGISTRY.specs()}))
"""


def examples_for(agent: str, function: str) -> list[str]:
    """Phrases that ask for `function` of `agent`, naming the agent: a skeleton's examples must
    not take everyday phrases ("add {text}") away from the agents already installed once it
    is installed too, so each says whose function it is ("add reminder with reminders: {text}")."""
    words = function.replace("_", " ")
    subject = agent.replace("-", " ")
    return [f"{words} with {subject}: {{text}}", f"ask {subject} to {words}: {{text}}"]


def _server_py(functions: list[str], agent: str, purpose: str | None = None) -> str:
    summary = " ".join((purpose or "").split())[:300].replace('"""', "'") or "say here what this function does for the user"
    parts = ['''"""{{title}}: the functions this agent exports (a skeleton made by the coder agent).

Each function takes the Context first; its docstring is the description people
and Sidekick see, and its type hints become the parameter schema.
"""

from __future__ import annotations

from dreamer.sdk import Context, function
''']
    for name in functions:
        words = name.replace("_", " ")
        examples = ", ".join(json.dumps(e) for e in examples_for(agent, name))
        parts.append(f'''

# Examples name this agent, so they never take everyday phrases from other agents.
@function(exported=True, examples=[{examples}])
def {name}(ctx: Context, text: str = "") -> dict:
    """{words.capitalize()}: {summary}."""
    return {{"function": "{name}", "text": text}}
''')
    return "".join(parts)


def _test_py(functions: list[str]) -> str:
    lines = ['"""Tests of the skeleton: each function answers with its name and the text it was given."""', "",
             f"from {{{{module}}}}.server import {', '.join(functions)}", ""]
    for name in functions:
        lines += ["", f"def test_{name}() -> None:",
                  f'    assert {name}(None, "some text") == {{"function": "{name}", "text": "some text"}}', ""]
    return "\n".join(lines)


def _check(name: str, functions: list[str]) -> None:
    if not isinstance(name, str) or AGENT_NAME.fullmatch(name) is None:
        raise ToolError("invalid_argument", f"{name!r} is not a valid agent name: use 2 to 63 lowercase letters, digits and dashes, starting with a letter")
    if not isinstance(functions, list) or len(functions) > MAX_FUNCTIONS:
        raise ToolError("invalid_argument", f"functions is a list of at most {MAX_FUNCTIONS} function names")
    for fn in functions:
        if not isinstance(fn, str) or not fn.isidentifier() or keyword.iskeyword(fn) or fn.startswith("_") or not fn.islower():
            raise ToolError("invalid_argument", f"{fn!r} is not a usable function name: use lowercase letters, digits and underscores")
    if len(set(functions)) != len(functions):
        raise ToolError("invalid_argument", "a function name is given twice")


def host_path(ws: Workspace, path: Path) -> str | None:
    """Where the user finds a workspace folder on their own machine (granted folders only)."""
    if not ws.source.startswith("mount:"):
        return None
    try:
        mounts = json.loads(os.environ.get("DREAMER_MOUNTS") or "{}")
    except ValueError:
        return None
    where = ws.source.removeprefix("mount:")
    scope = str(mounts.get(where, ""))
    host = scope.split(":", 1)[1] if ":" in scope else None
    return str(Path(host) / path.relative_to(ws.root)) if host else None


def scaffold(ws: Workspace, name: str, functions: list[str], folder: str | None = None, *, test: bool = True,
             purpose: str | None = None, user: str = "me") -> dict:
    """Write the bundle into `folder` (default: the agent's name) of the workspace `ws`."""
    ws.check_writable()
    functions = list(functions or [])
    _check(name, functions)
    dest = ws.resolve(folder or name)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ToolError("conflict", f"{ws.rel(dest)} exists already and is not an empty folder; choose another folder")
    overrides = {}
    if functions:
        overrides["{{module}}/server.py"] = _server_py(functions, name, purpose)
        overrides["tests/test_server.py"] = _test_py(functions)
    written = []
    for rel, text in bundle_files(name, overrides).items():
        write_file(ws, str(dest.relative_to(ws.root) / rel), text)
        written.append(str(Path(ws.rel(dest)) / rel))
    built = build(ws, dest)
    if not test:
        tests = {"passed": None, "summary": "not run"}
    elif (dest / "tests").is_dir():
        tests = run_tests(dest)
    else:
        tests = {"passed": True, "summary": "no tests in the bundle"}
    host = host_path(ws, dest)
    if host is None and ws.source == OWN_SOURCE:
        # coder's own data, on the kernel's machine: where a local kernel keeps it.
        where = f'"${{DREAMER_HOME:-$HOME/.dreamer}}/users/{user}/agents/coder/data/workspaces/{ws.name}/{ws.rel(dest)}"'
    else:
        where = host or "<the bundle folder>"
    return {"bundle": ws.rel(dest), "workspace": ws.name, "files": written,
            "functions": [f["name"] for f in built["functions"]], "tests": tests, "host_path": host,
            "install": f"dreamer install {where}  (shows the review of its permissions)"}


OWN_NAME = "new-agents"
OWN_SOURCE = "clone:coder's own folder for new agents"


def target_workspace(name: str | None) -> Workspace:
    """Where a new agent is written: the workspace the user names (a granted folder or a
    clone), else coder's own folder for new agents, never a granted repository unasked."""
    if name is not None:
        found = find(name)
        if found is None:
            names = ", ".join(w.name for w in all_workspaces()) or "none yet"
            raise ToolError("not_found", f"coder has no workspace {name!r} (it has: {names}); grant a folder "
                                         f"(dreamer grant coder fs:/path) or leave workspace out to use its own")
        return found
    root = clones_dir() / OWN_NAME
    root.mkdir(exist_ok=True)
    (clones_dir() / f".{OWN_NAME}.source").write_text(OWN_SOURCE.removeprefix("clone:"))
    return Workspace(root=root.resolve(), name=OWN_NAME, source=OWN_SOURCE)


def build(ws: Workspace, bundle: Path) -> dict:
    """Write functions.json by importing the entry module in a child process, as `dreamer build` does."""
    try:
        manifest = yaml.safe_load((bundle / "agent.yaml").read_text("utf-8"))
        entry = manifest["entry"]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        raise ToolError("invalid_bundle", f"{ws.rel(bundle)}/agent.yaml is missing or has no entry") from None
    if not isinstance(entry, str) or not re.fullmatch(r"[A-Za-z_][\w.]*", entry):
        raise ToolError("invalid_bundle", "agent.yaml's entry must be a module path such as my_agent.server")
    done = run_argv(python_argv("-c", _DESCRIBE, str(bundle), entry), bundle, BUILD_TIMEOUT_S)
    try:
        described = json.loads(done["output"].strip().splitlines()[-1]) if done["exit_code"] == 0 else None
    except (ValueError, IndexError):
        described = None
    if not isinstance(described, dict) or not described.get("functions"):
        raise ToolError("build_failed", f"importing {entry} failed: {done['output'].strip()[-500:]}")
    write_file(ws, str((bundle / "functions.json").relative_to(ws.root)), json.dumps(described, indent=2) + "\n")
    return described


def run_tests(bundle: Path) -> dict:
    done = run_argv(python_argv("-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header", "--rootdir", str(bundle), "tests"),
                    bundle, 120, pythonpath=str(bundle))
    last = [line for line in done["output"].strip().splitlines() if line.strip()][-1:] or [""]
    return {"passed": done["exit_code"] == 0, "summary": last[0].strip("= "), "output": done["output"][-3000:]}


__all__ = ["build", "module_name", "run_tests", "scaffold"]
