"""`dreamer init NAME [--template T]`: write a new agent bundle from a template in sdk/templates.py."""

from __future__ import annotations

import re
from pathlib import Path

from dreamer.contracts.names import NAME_RE
from dreamer.sdk.templates import TEMPLATES, bundle_files, module_name, package_name, title_for

__all__ = ["TEMPLATES", "ScaffoldError", "module_name", "package_name", "scaffold", "title_for"]


class ScaffoldError(ValueError):
    """Init refused: one sentence, and the error code the CLI reports."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def scaffold(name: str, dest: Path, template: str = "plain") -> Path:
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
    if template not in TEMPLATES:
        raise ScaffoldError("invalid_argument", f"there is no template {template!r}; choose one of {', '.join(TEMPLATES)}.")
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise ScaffoldError("conflict", f"{dest} already exists and is not a folder.")
    if dest.is_dir() and any(dest.iterdir()):
        raise ScaffoldError("conflict", f"{dest} already exists and is not empty; choose a new folder.")
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for rel, text in bundle_files(name, template=template, module=package_name(name)).items():
            path = dest / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ScaffoldError("invalid_argument", f"Could not write the new agent to {dest}: {exc.strerror}.") from None
    return dest
