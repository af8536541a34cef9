"""coder: a fast, sandboxed coding agent over the user's repositories.

Every tool is an exported function and a tool of the model's loop (run_task).
They act on the current workspace: a folder the user granted (`fs:` at /mnt/...)
or a clone in the agent's own data (open_workspace). Paths are relative to the
workspace root, and nothing outside it is read or written.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from dreamer.sdk import CallError, Context, function
from dreamer.sdk.errors import KINDS, DreamerSDKError
from pydantic import BaseModel

from . import build, clone, loop, tools, workspace
from . import workspace as workspace_module  # where a parameter is called `workspace`
from .workspace import ToolError

F = TypeVar("F", bound=Callable[..., Any])

# How long run_task lets the loop go: inside the invocation's own time limit
# (30 s by default), with room to report. Longer tasks wait for background runs (issue 10).
TASK_SECONDS = 25.0  # inside the kernel's 30 s per call
# Inside the kernel's 15 minutes per background attempt, with room to report.
BACKGROUND_TASK_SECONDS = 840.0


def tool(fn: F) -> F:
    """ToolError -> an SDK error with a kernel kind, so callers get one clear sentence."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ToolError as exc:
            kind = exc.code if exc.code in KINDS else "invalid_argument"
            raise DreamerSDKError(kind, exc.message, {"reason": exc.code}) from None

    return wrapper  # type: ignore[return-value]


def ws() -> workspace.Workspace:
    return workspace.current()


class TodoItem(BaseModel):
    text: str
    status: str = "pending"


@function(exported=True, examples=["which repositories can coder work on"])
@tool
def workspaces(ctx: Context) -> dict:
    """The workspaces coder can work in (granted folders and its own clones), and the current one."""
    found = workspace.all_workspaces()
    try:
        chosen = workspace.current().name
    except ToolError:
        chosen = None
    return {"workspaces": [{"name": w.name, "root": str(w.root), "source": w.source, "writable": w.writable} for w in found],
            "current": chosen}


@function(exported=True, examples=["open the workspace {source}"])
@tool
def open_workspace(ctx: Context, source: str, name: str | None = None) -> dict:
    """Choose the workspace to work in: a workspace's name, a folder to clone, or a .tar.gz/.zip URL (needs net:)."""
    opened = clone.open_workspace(source, name, fetch=ctx.fetch)
    return {"name": opened.name, "root": str(opened.root), "source": opened.source, "writable": opened.writable}


@function(exported=True)
@tool
def read(ctx: Context, path: str, offset: int = 1, limit: int = 400) -> dict:
    """Read a text file of the workspace: numbered lines from offset (1-based), at most limit lines."""
    return tools.read(ws(), path, offset, limit)


@function(exported=True)
@tool
def edit(ctx: Context, path: str, old: str, new: str, replace_all: bool = False) -> dict:
    """Replace the exact text old by new in a file; reports the lint errors the edit introduced."""
    return tools.edit(ws(), path, old, new, replace_all)


@function(exported=True)
@tool
def write(ctx: Context, path: str, content: str) -> dict:
    """Create or replace a whole file; reports the lint errors it introduced."""
    return tools.write(ws(), path, content)


@function(exported=True)
@tool
def grep(ctx: Context, pattern: str, glob: str | None = None) -> dict:
    """Lines matching a regular expression, optionally only in files matching a glob."""
    return tools.grep(ws(), pattern, glob)


@function(exported=True)
@tool
def glob(ctx: Context, pattern: str) -> dict:
    """Files whose path matches a glob such as '*.py' or 'src/**/*.ts'."""
    return tools.glob(ws(), pattern)


@function(exported=True, examples=["search the code for {query}"])
@tool
def search(ctx: Context, query: str, k: int = 10) -> dict:
    """Search the codebase index (functions, classes, blocks; BM25) for words; best matches first."""
    return tools.search(ws(), query, k)


@function(exported=True)
@tool
def lint(ctx: Context, paths: list[str] | None = None) -> dict:
    """Lint files or folders (ruff for Python; JSON, TOML and YAML must parse); the whole workspace without paths."""
    return tools.run_lint(ws(), paths)


@function(exported=True)
@tool
def run(ctx: Context, cmd: str, timeout: float = 20.0) -> dict:
    """Run a shell command in the workspace, in the sandbox; output cut to head and tail, with its exit code."""
    return tools.run(ws(), cmd, timeout)


@function(exported=True, examples=["run the tests"])
@tool
def test(ctx: Context, cmd: str | None = None) -> dict:
    """Run the workspace's tests (pytest when it uses pytest), or the given command."""
    return tools.test(ws(), cmd)


@function(exported=True, examples=["what did coder change"])
@tool
def diff(ctx: Context) -> dict:
    """The changes in the workspace as a unified diff (against the last commit in a git repository)."""
    return tools.diff(ws())


@function(exported=True)
@tool
def todo(ctx: Context, items: list[TodoItem] | None = None) -> dict:
    """The task checklist: without items, show it; with items, replace it."""
    return tools.todos(ws(), None if items is None else [i.model_dump() for i in items])


@function(exported=True)
@tool
def finish(ctx: Context, summary: str = "") -> dict:
    """The diff of the work and a summary of it."""
    return tools.finish(ws(), summary)


@function(exported=True, confirm=True)
@tool
def commit(ctx: Context, message: str) -> dict:
    """Commit every change in the workspace to git with this message (asks you first; never pushes)."""
    from . import gitops

    return gitops.commit(ws(), message)


@function(exported=True, examples=["coder: {instruction}", "fix {instruction}"])
@tool
def run_task(ctx: Context, instruction: str, max_steps: int = 30, max_tokens: int = 400_000) -> dict:
    """Do a coding task in the current workspace with the model (grant llm): search, read, edit, test, until done.

    Returns the status, a summary, the diff and counts of steps, tool calls and
    tokens. Nothing is committed: review the diff, then call commit. For work longer
    than a call may take, use start_task.
    """
    return _task(ctx, instruction, max_steps, max_tokens, TASK_SECONDS)


@function(exported=True, background=True, examples=["coder: start {instruction}", "work on {instruction} in the background"])
@tool
def start_task(ctx: Context, instruction: str, max_steps: int = 100, max_tokens: int = 2_000_000) -> dict:
    """Do a longer coding task in the background (grant llm): answers at once with the run's id.

    Follow its steps with `dreamer logs --run ID`; its result, when done, is what
    run_task returns (status, summary, diff, counts). Nothing is committed.
    """
    return _task(ctx, instruction, max_steps, max_tokens, BACKGROUND_TASK_SECONDS)


def _task(ctx: Context, instruction: str, max_steps: int, max_tokens: int, seconds: float) -> dict:
    if not isinstance(instruction, str) or not instruction.strip():
        raise ToolError("invalid_argument", "say what to do, for example 'make the failing test in tests/test_calc.py pass'")

    def llm(messages: list[dict[str, Any]], specs: list[dict[str, Any]], system: str) -> dict[str, Any]:
        try:
            return ctx.llm_tools(messages, specs, system=system, max_tokens=4096)
        except CallError as exc:
            raise DreamerSDKError(exc.kind, exc.message) from None

    task = loop.Task(ws(), instruction.strip(), llm,
                     loop.Limits(max_steps=max(1, min(max_steps, 200)), max_tokens=max(1000, max_tokens), max_seconds=seconds),
                     log=lambda message: ctx.log(message))
    return task.run()


@function(exported=True, examples=["make a new agent called {name}"])
@tool
def scaffold_agent(ctx: Context, name: str, functions: list[str] | None = None, workspace: str | None = None,
                   folder: str | None = None) -> dict:
    """Write a new agent bundle (the `dreamer init` template, with these functions), build its
    functions.json and run its tests; then install it with the command it names.

    It goes into `folder` (default: the agent's name) of the workspace named `workspace` (a folder
    you granted coder, or one of its clones); without one, into coder's own workspace for new agents
    (new-agents), never into a repository of yours you did not name."""
    return build.scaffold(build.target_workspace(workspace), name, list(functions or []), folder, user=ctx.user.name)


class AgentPlan(BaseModel):
    name: str
    functions: list[str]


def _plan_agent(ctx: Context, description: str, functions: list[str] | None) -> tuple[str, list[str]]:
    """The model names the new agent and its functions (checked like any name a person gives)."""
    try:
        plan = ctx.llm(
            "Name a new dreamer agent and its exported functions for this description. The name is 2 to 63 "
            "lowercase letters, digits and dashes, starting with a letter; functions are lowercase Python "
            f"identifiers (at most 8).\nDescription: {description.strip()}",
            schema=AgentPlan, max_tokens=300,
        )
    except CallError as exc:
        raise DreamerSDKError(exc.kind, exc.message) from None
    return plan.name, list(functions or plan.functions)


@function(exported=True, examples=["build me an agent that {description}"])
@tool
def create_agent(ctx: Context, description: str, name: str | None = None, functions: list[str] | None = None,
                 workspace: str | None = None, folder: str | None = None) -> dict:
    """Write a new agent from a description with the model (grant llm): scaffold it, then let the
    coding loop implement it and its tests; build and test it; install it with the command it names.

    `workspace` and `folder` say where, as for scaffold_agent (default: coder's own workspace for
    new agents); that workspace becomes the current one, where the coding loop works."""
    if not isinstance(description, str) or not description.strip():
        raise ToolError("invalid_argument", "describe what the new agent should do")
    target = build.target_workspace(workspace)
    if name is None:
        name, functions = _plan_agent(ctx, description, functions)
    made = build.scaffold(target, name, list(functions or []), folder, test=False,  # tested once it is implemented
                          purpose=description, user=ctx.user.name)
    workspace_module.set_current(target)
    instruction = (
        f"Implement the dreamer agent in the folder {made['bundle']}/ so that it does this: {description.strip()}\n"
        "It uses the dreamer SDK (from dreamer.sdk import Context, function); keep each function's docstring and type hints, "
        "declare any permission it needs in agent.yaml, and keep its tests in tests/ passing "
        f"(run them with: test('cd {made['bundle']} && PYTHONPATH=. python -S -m pytest -q tests')). Then call finish."
    )
    result = run_task(ctx, instruction)
    target = workspace_module.current().resolve(made["bundle"])
    built = build.build(ws(), target)
    tests = build.run_tests(target)
    return {**made, "functions": [f["name"] for f in built["functions"]], "tests": tests, "task": {
        k: result[k] for k in ("status", "summary", "stats")}}
