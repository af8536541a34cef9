"""The files of a new agent bundle, as strings: what `dreamer init NAME` writes,
and what the coder agent's `scaffold_agent` starts from inside its sandbox (the
SDK is the one part of dreamer every sandbox sees, hence it lives here).

Kept as one module rather than a folder tree because setup.py turns every
folder into a package, and a folder named `{{module}}` cannot be one.

Placeholders, replaced in paths and contents: `{{name}}` (the agent name, as in
agent.yaml), `{{module}}` (the Python package holding the code) and `{{title}}`.
"""

from __future__ import annotations

import keyword
import sys

# Top-level modules the worker itself imports; an agent package with one of
# these names would shadow it (or be shadowed) inside the sandbox.
_TAKEN = frozenset({"dreamer", "pydantic", "pydantic_core", "typing_extensions", "annotated_types", "typing_inspection"})

AGENT_YAML = """\
name: {{name}}
version: 0.1.0
kind: agent
title: {{title}}
description: A new dreamer agent. Say here, in a sentence or two, what it does for the person who installs it.
# Your publisher name: lowercase letters, digits and dashes.
publisher: me
# The module that defines the agent's functions ({{module}}/server.py).
entry: {{module}}.server
# Declare exactly what the agent uses; the user reviews this list before installing.
# For example: agent:grocery.add_items, llm, notify, memory:read, net:api.example.com
permissions:
  required: []
  optional: []
"""

PACKAGE_INIT = '''\
"""The {{name}} agent."""
'''

SERVER_PY = '''\
"""{{title}}: the functions this agent exports.

Each function takes the Context first; its docstring is the description people
and Sidekick see, and its type hints become the parameter schema.
"""

from __future__ import annotations

import keyword
import sys

# Top-level modules the worker itself imports; an agent package with one of
# these names would shadow it (or be shadowed) inside the sandbox.
_TAKEN = frozenset({"dreamer", "pydantic", "pydantic_core", "typing_extensions", "annotated_types", "typing_inspection"})

from dreamer.sdk import Context, function


@function(exported=True, examples=["say hello to {name}", "greet {name}"])
def hello(ctx: Context, name: str = "world") -> str:
    """Greet someone by name."""
    name = " ".join(name.split()) or "world"
    if len(name) > 100:
        # A ValueError reaches the caller as one clear sentence.
        raise ValueError("A name can be at most 100 characters long.")
    ctx.log("greeting someone", name=name)
    return f"Hello, {name}!"
'''

README_MD = """\
# {{title}}

A dreamer agent. Its code is in `{{module}}/server.py`; its manifest, with the
permissions it asks for, is `agent.yaml`.

```sh
dreamer build                      # check the bundle and list its functions
dreamer install . --yes            # install it for yourself
dreamer call {{name}} hello '{"name": "Ada"}'
dreamer chat "say hello to Ada"
dreamer logs                       # what the agent logged
```

The agent keeps its own data in `/data` (its SQLite database is `ctx.db`) and
reaches anything else only through the kernel (`ctx.call`, ...), with the
permissions declared in `agent.yaml`.
"""

# relative path (placeholders allowed) -> contents
FILES: dict[str, str] = {
    "agent.yaml": AGENT_YAML,
    "README.md": README_MD,
    "{{module}}/__init__.py": PACKAGE_INIT,
    "{{module}}/server.py": SERVER_PY,
}


def module_name(name: str) -> str:
    """The Python package name for an agent name: dashes become underscores, clashes get "_agent"."""
    module = name.replace("-", "_")
    if keyword.iskeyword(module) or module in sys.stdlib_module_names or module in _TAKEN:
        module += "_agent"
    return module


def title_for(name: str) -> str:
    return " ".join(part.capitalize() for part in name.split("-") if part)


def render(text: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


def bundle_files(name: str, overrides: dict[str, str] | None = None) -> dict[str, str]:
    """{relative path: contents} of a new bundle named `name` (a valid agent name).

    `overrides` replaces or adds files, keyed by their template path
    (`{{module}}/server.py`), placeholders allowed in their contents too.
    """
    values = {"{{name}}": name, "{{module}}": module_name(name), "{{title}}": title_for(name)}
    return {render(rel, values): render(text, values) for rel, text in {**FILES, **(overrides or {})}.items()}
