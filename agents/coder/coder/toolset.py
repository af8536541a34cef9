"""The model's toolset: names, descriptions and JSON schemas, and which tools only read."""

from __future__ import annotations

from typing import Any

from . import tools
from .workspace import Workspace


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


S, I, B = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}

SPECS: list[dict[str, Any]] = [
    {"name": "read", "description": "Read a text file of the workspace: numbered lines from offset (1-based), at most limit lines.",
     "parameters": _obj({"path": S, "offset": I, "limit": I}, ["path"])},
    {"name": "search", "description": "Search the codebase index (functions, classes, blocks) for words; best matches first with a preview.",
     "parameters": _obj({"query": S, "k": I}, ["query"])},
    {"name": "grep", "description": "Lines matching a regular expression, optionally only in files matching a glob.",
     "parameters": _obj({"pattern": S, "glob": S}, ["pattern"])},
    {"name": "glob", "description": "Files whose path matches a glob such as '*.py' or 'src/**/*.ts'.",
     "parameters": _obj({"pattern": S}, ["pattern"])},
    {"name": "lint", "description": "Lint files or folders (ruff for Python; JSON/TOML/YAML must parse). No paths: the whole workspace.",
     "parameters": _obj({"paths": {"type": "array", "items": S}}, [])},
    {"name": "diff", "description": "The changes made so far, as a unified diff.", "parameters": _obj({}, [])},
    {"name": "edit", "description": "Replace the exact text old by new in a file you have read. old must occur once unless replace_all. Reports lint errors the edit introduced.",
     "parameters": _obj({"path": S, "old": S, "new": S, "replace_all": B}, ["path", "old", "new"])},
    {"name": "write", "description": "Create a file, or replace a whole file you have read. Reports lint errors it introduced.",
     "parameters": _obj({"path": S, "content": S}, ["path", "content"])},
    {"name": "run", "description": "Run a shell command in the workspace (no network). Output is cut to its head and tail.",
     "parameters": _obj({"cmd": S, "timeout": {"type": "number"}}, ["cmd"])},
    {"name": "test", "description": "Run the tests (pytest when the repository uses it), or the given command.",
     "parameters": _obj({"cmd": S}, [])},
    {"name": "todo", "description": "Your checklist: without items, show it; with items [{text, status: pending|in_progress|done}], replace it.",
     "parameters": _obj({"items": {"type": "array", "items": _obj({"text": S, "status": S}, ["text"])}}, [])},
    {"name": "finish", "description": "End the task with a short summary of what changed and why.",
     "parameters": _obj({"summary": S}, ["summary"])},
]

# Tools that change nothing in the workspace: a turn's calls of these run in parallel.
READ_ONLY = frozenset({"read", "search", "grep", "glob", "lint", "diff"})
CHANGES = frozenset({"edit", "write"})


def call(ws: Workspace, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Run one tool by its model-facing name."""
    if name == "lint":
        return tools.run_lint(ws, args.get("paths"))
    if name == "todo":
        return tools.todos(ws, args.get("items"))
    if name == "finish":
        return tools.finish(ws, args.get("summary", ""))
    function = getattr(tools, name)
    return function(ws, **args)
