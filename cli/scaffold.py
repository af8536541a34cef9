"""`dreamer init NAME`: write a new agent bundle from the template in cli/templates.py."""

from __future__ import annotations

import keyword
import re
import sys
from pathlib import Path

from dreamer.cli.templates import FILES
from dreamer.kernel.bundles.manifest import NAME_RE

# Top-level modules the worker itself imports; an agent package with one of
# these names would shadow it (or be shadowed) inside the sandbox.
_TAKEN = frozenset({"dreamer", "pydantic", "pydantic_core", "typing_extensions", "annotated_types", "typing_inspection"})


class ScaffoldError(ValueError):
    """Init refused: one sentence, and the error code the CLI reports."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


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


def scaffold(name: str, dest: Path) -> Path:
    """Write a new agent bundle named `name` into the folder `dest` and return that folder.

    `dest` may not exist yet or may be an empty folder; anything else is refused
    so that init never overwrites someone's work.
    """
    if not isinstance(name, str) or re.fullmatch(NAME_RE, name) is None:
        raise ScaffoldError(
            "invalid_argument",
            f"{name!r} is not a valid agent name: use 2 to 63 lowercase letters, digits and dashes, "
            "starting with a letter (for example 'my-agent').",
        )
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise ScaffoldError("conflict", f"{dest} already exists and is not a folder.")
    if dest.is_dir() and any(dest.iterdir()):
        raise ScaffoldError("conflict", f"{dest} already exists and is not empty; choose a new folder.")
    values = {"{{name}}": name, "{{module}}": module_name(name), "{{title}}": title_for(name)}
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for rel, text in FILES.items():
            path = dest / render(rel, values)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(text, values), encoding="utf-8")
    except OSError as exc:
        raise ScaffoldError("invalid_argument", f"Could not write the new agent to {dest}: {exc.strerror}.") from None
    return dest
