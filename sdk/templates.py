"""The files of a new agent bundle, as strings: what `dreamer init NAME [--template T]`
writes, and what the coder agent's `scaffold_agent` starts from inside its sandbox (the
SDK is the one part of dreamer every sandbox sees, hence it lives here).

Kept as one module rather than a folder tree because setup.py turns every folder into
a package, and a folder named `{{module}}` cannot be one.

Placeholders, replaced in paths and contents: `{{name}}` (the agent name, as in
agent.yaml), `{{module}}` (the Python package holding the code) and `{{title}}`.

Every template's files pass `ruff check` (the project's rules and ruff's defaults),
`dreamer build` and `dreamer test` as written; tests/test_templates.py and
tests/cli/test_cli_init.py hold them to it.
"""

from __future__ import annotations

import keyword
import sys

# Top-level modules the worker itself imports; an agent package with one of
# these names would shadow it (or be shadowed) inside the sandbox.
_TAKEN = frozenset({"dreamer", "pydantic", "pydantic_core", "typing_extensions", "annotated_types", "typing_inspection"})

# The scaffold's placeholders: `dreamer publish` refuses a manifest that still holds one.
PLACEHOLDER_DESCRIPTION = "A new dreamer agent. Say here, in a sentence or two, what it does for the person who installs it."
PLACEHOLDER_PUBLISHER = "me"

TEMPLATES = ("plain", "database", "calls", "background", "tool")

def _head(kind: str) -> str:
    return f"""\
name: {{{{name}}}}
version: 0.1.0
kind: {kind}
title: {{{{title}}}}
description: {PLACEHOLDER_DESCRIPTION}
# Your publisher name on the gallery (`dreamer login URL --name NAME`).
publisher: {PLACEHOLDER_PUBLISHER}
"""


def _agent_yaml(required: str = "[]", tail: str = "") -> str:
    return _head("agent") + f"""\
# The module that defines the agent's functions ({{{{module}}}}/server.py).
entry: {{{{module}}}}.server
# Declare exactly what the agent uses; the user reviews this list before installing.
# For example: agent:grocery.add_items, llm, notify, memory:read, net:api.example.com
permissions:
  required: {required}
  optional: []
{tail}"""


PACKAGE_INIT = '''\
"""The {{name}} agent."""
'''

# ------------------------------------------------------------------------- plain

PLAIN_SERVER = '''\
"""{{title}}: the functions this agent exports.

Each function takes the Context first; its docstring is the description people
and Sidekick see, and its type hints become the parameter schema.
"""

from __future__ import annotations

from dreamer.sdk import Context, function


@function(exported=True, examples=["say hello to {name} with {{name}}"])
def hello(ctx: Context, name: str = "world") -> str:
    """Greet someone by name."""
    name = " ".join(name.split()) or "world"
    if len(name) > 100:
        # A ValueError reaches the caller as one clear sentence.
        raise ValueError("A name can be at most 100 characters long.")
    ctx.log("greeting someone", name=name)
    return f"Hello, {name}!"
'''

PLAIN_TEST = '''\
"""Tests for {{module}}/server.py; `dreamer test` runs them in the sandbox."""

from __future__ import annotations

from {{module}}.server import hello


def test_hello_greets_by_name(ctx, kernel) -> None:
    assert hello(ctx, "Ada") == "Hello, Ada!"
    assert kernel.logs == [("greeting someone", {"name": "Ada"})]


def test_hello_refuses_a_very_long_name(ctx) -> None:
    try:
        hello(ctx, "x" * 101)
    except ValueError as exc:
        assert "at most 100" in str(exc)
    else:
        raise AssertionError("a name of 101 characters was accepted")
'''

# ---------------------------------------------------------------------- database

DATABASE_SERVER = '''\
"""{{title}}: notes kept in the agent's own database.

`ctx.db` is this agent's SQLite database; each call is one transaction, committed
when the function returns and rolled back when it raises.
"""

from __future__ import annotations

from dreamer.sdk import Context, function

SCHEMA = "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"


@function(exported=True, examples=["note {text} in {{name}}"], reply="Noted: {text}.")
def add_note(ctx: Context, text: str) -> dict:
    """Keep a short note."""
    text = " ".join(text.split())
    if not text:
        raise ValueError("A note needs some text.")
    ctx.db.execute(SCHEMA)
    cursor = ctx.db.execute("INSERT INTO notes (text) VALUES (?)", (text,))
    return {"id": cursor.lastrowid, "text": text}


@function(exported=True, examples=["what is in {{name}}"])
def list_notes(ctx: Context) -> list[dict]:
    """The notes kept so far, oldest first."""
    ctx.db.execute(SCHEMA)
    rows = ctx.db.execute("SELECT id, text FROM notes ORDER BY id").fetchall()
    return [{"id": row["id"], "text": row["text"]} for row in rows]
'''

DATABASE_TEST = '''\
"""Tests for {{module}}/server.py against a real SQLite database; `dreamer test` runs them in the sandbox."""

from __future__ import annotations

from {{module}}.server import add_note, list_notes


def test_a_note_is_kept_and_listed(ctx) -> None:
    assert list_notes(ctx) == []
    added = add_note(ctx, "  buy   stamps ")
    assert added["text"] == "buy stamps"
    assert list_notes(ctx) == [{"id": added["id"], "text": "buy stamps"}]


def test_an_empty_note_is_refused(ctx) -> None:
    try:
        add_note(ctx, "   ")
    except ValueError as exc:
        assert "needs some text" in str(exc)
    else:
        raise AssertionError("an empty note was kept")
    assert list_notes(ctx) == []
'''

# ------------------------------------------------------------------------- calls

CALLS_SERVER = '''\
"""{{title}}: a function that calls another agent through the kernel.

`ctx.call(agent, function, **args)` needs the permission `agent:<agent>.<function>`
in agent.yaml; the user grants it when installing.
"""

from __future__ import annotations

from dreamer.sdk import CallError, Context, function


@function(exported=True, examples=["{{name}}: remember to buy {item}"])
def remember_to_buy(ctx: Context, item: str) -> dict:
    """Put an item on the grocery list (through the grocery agent)."""
    item = " ".join(item.split())
    if not item:
        raise ValueError("Say which item to buy.")
    try:
        answer = ctx.call("grocery", "add_items", items=[item])
    except CallError as exc:
        if exc.kind == "not_found":
            raise ValueError("The grocery agent is not installed; install it first.") from None
        raise
    return {"item": item, "grocery": answer}
'''

CALLS_TEST = '''\
"""Tests for {{module}}/server.py; the grocery agent is replaced by a recorded answer."""

from __future__ import annotations

from {{module}}.server import remember_to_buy


def test_the_item_goes_to_the_grocery_agent(ctx, kernel) -> None:
    kernel.answers["grocery.add_items"] = {"added": ["milk"]}
    assert remember_to_buy(ctx, " milk ") == {"item": "milk", "grocery": {"added": ["milk"]}}
    assert kernel.calls == [("grocery", "add_items", {"items": ["milk"]})]


def test_a_missing_grocery_agent_is_said_plainly(ctx) -> None:
    # No answer recorded for grocery.add_items: the test kernel says not_found.
    try:
        remember_to_buy(ctx, "milk")
    except ValueError as exc:
        assert "not installed" in str(exc)
    else:
        raise AssertionError("a missing grocery agent went unnoticed")
'''

# -------------------------------------------------------------------- background

BACKGROUND_SERVER = '''\
"""{{title}}: background work, started every morning by the cron trigger in agent.yaml.

A background function answers its caller with an invocation id at once and runs
on; `retries` lets the kernel run it again after a failure.
"""

from __future__ import annotations

from dreamer.sdk import Context, function

SCHEMA = "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, trigger TEXT)"


@function(background=True, retries=1)
def morning(ctx: Context, fired: dict | None = None) -> dict:
    """The morning run (the `morning` cron trigger): count the runs and post to the feed."""
    ctx.db.execute(SCHEMA)
    ctx.db.execute("INSERT INTO runs (trigger) VALUES (?)", ((ctx.trigger or {}).get("name"),))
    count = ctx.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    post = ctx.post(f"Good morning! This is run {count} of {{title}}.")
    return {"runs": count, "post": post}
'''

BACKGROUND_TEST = '''\
"""Tests for {{module}}/server.py; the feed post is recorded instead of sent."""

from __future__ import annotations

from {{module}}.server import morning


def test_each_run_is_counted_and_posted(ctx, kernel) -> None:
    assert morning(ctx)["runs"] == 1
    assert morning(ctx)["runs"] == 2
    assert [text for text, _priority in kernel.posts] == [
        "Good morning! This is run 1 of {{title}}.",
        "Good morning! This is run 2 of {{title}}.",
    ]
'''

BACKGROUND_TRIGGERS = """\
# Runs `morning` at 07:00 every day (the user's time zone); needs `schedule`.
triggers:
  - {type: cron, schedule: "0 7 * * *", entrypoint: morning, name: morning}
"""

# -------------------------------------------------------------------------- tool

TOOL_YAML = _head("tool") + """\
# A tool bundle is an MCP server run in the sandbox; agents reach it with a `tool:` grant.
server: {command: [python, -m, {{module}}]}
"""

TOOL_SERVER = '''\
"""{{title}}: the tools this MCP server offers (`python -m {{module}}` runs it)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("{{name}}", instructions="Counts the words in a text.")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def count_words(text: str) -> dict:
    """How many words and lines a text has."""
    return {"words": len(text.split()), "lines": len(text.splitlines())}
'''

TOOL_MAIN = '''\
"""Start the {{name}} MCP server on stdio."""

from {{module}}.server import server

server.run()
'''

TOOL_TEST = '''\
"""Tests for {{module}}/server.py: the tools are plain functions too."""

from __future__ import annotations

from {{module}}.server import count_words


def test_count_words() -> None:
    assert count_words("one two\\nthree") == {"words": 3, "lines": 2}
    assert count_words("") == {"words": 0, "lines": 0}
'''

# ---------------------------------------------------------------- shared test fixtures

CONFTEST = '''\
"""Fixtures for this agent's tests: a real Context and a real SQLite database, with a
stand-in for the kernel that records what the agent asks of it (logs, posts, calls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dreamer.sdk import CallError, Context, User
from dreamer.sdk.database import AgentDatabase


class RecordingKernel:
    """Answers the syscalls a Context makes; `answers["agent.function"]` is what ctx.call returns."""

    def __init__(self) -> None:
        self.answers: dict[str, Any] = {}
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.posts: list[tuple[str, str]] = []
        self.logs: list[tuple[str, dict[str, Any]]] = []

    def request(self, method: str, params: dict[str, Any]) -> Any:
        if method == "agents.call":
            key = f"{params['agent']}.{params['function']}"
            self.calls.append((params["agent"], params["function"], params["args"]))
            if key not in self.answers:
                raise CallError("not_found", f"no answer recorded for {key}")
            return {"value": self.answers[key]}
        if method == "posts.create":
            self.posts.append((params["text"], params["priority"]))
            return {"id": len(self.posts)}
        raise CallError("not_available", f"the test kernel does not answer {method}")

    def notify(self, method: str, params: dict[str, Any]) -> None:
        if method == "log":
            self.logs.append((params["message"], params["fields"]))


@pytest.fixture
def kernel() -> RecordingKernel:
    return RecordingKernel()


@pytest.fixture
def ctx(kernel: RecordingKernel, tmp_path: Path):
    database = AgentDatabase(tmp_path)
    yield Context(
        user=User(id=1, name="tester", timezone="UTC"), invocation_id="test", agent="{{name}}",
        function="test", kernel=kernel, database=database,
    )
    database.close()
'''


def _readme(extra: str = "") -> str:
    return """\
# {{title}}

A dreamer agent. Its code is in `{{module}}/`; its manifest, with the permissions
it asks for, is `agent.yaml`; its tests are in `tests/`.

```sh
dreamer test                       # run tests/ in the sandbox
dreamer build                      # check the bundle and write functions.json
dreamer dev                        # install it for yourself and reload on every change
dreamer pack                       # make {{name}}-0.1.0.tar.gz to share or install
dreamer publish                    # sign and upload it (fill in description and publisher first)
```
""" + extra


README_MD = _readme()

# template -> {relative path (placeholders allowed) -> contents}
_COMMON = {"README.md": README_MD, "{{module}}/__init__.py": PACKAGE_INIT}
_TEMPLATE_FILES: dict[str, dict[str, str]] = {
    "plain": {"agent.yaml": _agent_yaml(), "{{module}}/server.py": PLAIN_SERVER, "tests/test_server.py": PLAIN_TEST},
    "database": {"agent.yaml": _agent_yaml(), "{{module}}/server.py": DATABASE_SERVER, "tests/test_server.py": DATABASE_TEST},
    "calls": {"agent.yaml": _agent_yaml("[agent:grocery.add_items]"), "{{module}}/server.py": CALLS_SERVER,
              "tests/test_server.py": CALLS_TEST},
    "background": {"agent.yaml": _agent_yaml("[schedule, notify]", BACKGROUND_TRIGGERS),
                   "{{module}}/server.py": BACKGROUND_SERVER, "tests/test_server.py": BACKGROUND_TEST},
    "tool": {"agent.yaml": TOOL_YAML, "{{module}}/server.py": TOOL_SERVER, "{{module}}/__main__.py": TOOL_MAIN,
             "tests/test_server.py": TOOL_TEST},
}
_TESTS = {"tests/conftest.py": CONFTEST}

# The plain template without its tests: what the coder agent's scaffold starts from.
FILES: dict[str, str] = {
    "agent.yaml": _agent_yaml(), **_COMMON, "{{module}}/server.py": PLAIN_SERVER,
}
AGENT_YAML = FILES["agent.yaml"]
SERVER_PY = PLAIN_SERVER


def module_name(name: str) -> str:
    """The Python package name for an agent name: dashes become underscores, clashes get "_agent"."""
    module = name.replace("-", "_")
    if keyword.iskeyword(module) or module in sys.stdlib_module_names or module in _TAKEN:
        module += "_agent"
    return module


def package_name(name: str) -> str:
    """The package `dreamer init` writes: never spelled like the bundle itself, so that inside
    the bundle folder `NAME` cannot be read as a path (`hello` -> `hello_agent`)."""
    module = module_name(name)
    return module if module != name else f"{module}_agent"


def title_for(name: str) -> str:
    return " ".join(part.capitalize() for part in name.split("-") if part)


def render(text: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


def bundle_files(
    name: str, overrides: dict[str, str] | None = None, *, template: str | None = None, module: str | None = None,
) -> dict[str, str]:
    """{relative path: contents} of a new bundle named `name` (a valid agent name).

    `template` picks one of TEMPLATES, tests included; None is the plain agent without
    tests (the coder's starting point). `module` names the package (default:
    module_name(name)). `overrides` replaces or adds files, keyed by their template path
    (`{{module}}/server.py`), placeholders allowed in their contents too.
    """
    if template is None:
        files = FILES
    elif template in _TEMPLATE_FILES:
        files = {**_COMMON, **_TEMPLATE_FILES[template], **_TESTS}
    else:
        raise ValueError(f"there is no template {template!r}; choose one of {', '.join(TEMPLATES)}")
    values = {"{{name}}": name, "{{module}}": module or module_name(name), "{{title}}": title_for(name)}
    return {render(rel, values): render(text, values) for rel, text in {**files, **(overrides or {})}.items()}


def placeholder_fields(manifest: dict[str, object]) -> list[str]:
    """The fields of agent.yaml still missing or holding the scaffold's placeholder text."""
    problems = []
    description = manifest.get("description")
    if not isinstance(description, str) or not description.strip() or description.strip() == PLACEHOLDER_DESCRIPTION:
        problems.append("description")
    publisher = manifest.get("publisher")
    if not isinstance(publisher, str) or publisher in ("", PLACEHOLDER_PUBLISHER):
        problems.append("publisher")
    title = manifest.get("title")
    if not isinstance(title, str) or not title.strip():
        problems.append("title")
    return problems
