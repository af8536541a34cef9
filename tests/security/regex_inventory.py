"""Every regular expression that reads user text on the kernel's side: chat messages, memory, answers.

Two sources, so that neither a pattern built at import time nor one written
inline is missed: the compiled patterns each module holds (module attributes,
and those inside tuples, lists and dicts there), and every `re.<function>(literal, ...)`
call in the source. Used by test_regex_backtracking.py.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What sees user text in the kernel's process: Sidekick (chat, planner, memory) and the kernel's memory.
FOLDERS = ("sidekick", "kernel/memory")
RE_FUNCTIONS = {"compile", "match", "search", "fullmatch", "sub", "subn", "findall", "finditer", "split"}


def source_files() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return "dreamer." + ".".join(parts)


def _held(value: object, depth: int = 0) -> Iterator[re.Pattern[str]]:
    if isinstance(value, re.Pattern):
        if isinstance(value.pattern, str):
            yield value
    elif depth < 2 and isinstance(value, (tuple, list, frozenset, set)):
        for item in value:
            yield from _held(item, depth + 1)
    elif depth < 2 and isinstance(value, dict):
        for item in value.values():
            yield from _held(item, depth + 1)


def compiled_patterns() -> dict[str, re.Pattern[str]]:
    """'module.NAME' -> the compiled pattern, for every pattern a module holds."""
    found: dict[str, re.Pattern[str]] = {}
    for path in source_files():
        name = module_name(path)
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            for n, pattern in enumerate(_held(value)):
                found[f"{name}.{attr}" + (f"[{n}]" if n else "")] = pattern
    return found


def inline_patterns() -> dict[str, re.Pattern[str]]:
    """'file:line' -> the pattern of each re.<function>("literal", ...) call in the source."""
    found: dict[str, re.Pattern[str]] = {}
    for path in source_files():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "re"):
                continue
            if node.func.attr not in RE_FUNCTIONS or not node.args:
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                flags = 0
                for kw in node.keywords:
                    if kw.arg == "flags":
                        flags = re.IGNORECASE if "IGNORECASE" in ast.unparse(kw.value) else 0
                found[f"{path.relative_to(ROOT)}:{node.lineno}"] = re.compile(first.value, flags)
    return found


@lru_cache(maxsize=1)
def all_patterns() -> dict[str, re.Pattern[str]]:
    """Every pattern once: an inline `re.compile(...)` a module keeps (`REPLACE = [re.compile(...), ...]`) is
    named by the module attribute that holds it, not by its line, which moves with every edit above it."""
    compiled = compiled_patterns()
    held = {p.pattern for p in compiled.values()}  # (by its text: the source's flags are not all read)
    inline = {name: p for name, p in inline_patterns().items() if p.pattern not in held}
    return {**compiled, **inline}
