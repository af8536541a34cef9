"""Every `dreamer.*` import in the tree, as (from module, to module, line, inside a function).

Read with `ast`, so imports inside functions and under TYPE_CHECKING count too; a
relative import is resolved against its module's package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("kernel", "sidekick", "sdk", "cli", "agents", "gallery", "web", "host", "contracts")


@dataclass(frozen=True)
class Import:
    source: str  # dreamer.kernel.core
    target: str  # dreamer.sidekick.chat.sidekick
    path: Path
    line: int
    in_function: bool
    type_only: bool  # under `if TYPE_CHECKING:`

    @property
    def source_layer(self) -> str:
        return self.source.split(".")[1]

    @property
    def target_layer(self) -> str:
        return self.target.split(".")[1]

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line} imports {self.target}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return "dreamer." + ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, in_function: bool, type_only: bool) -> Iterator[tuple[ast.AST, bool, bool]]:
    for child in ast.iter_child_nodes(node):
        yield child, in_function, type_only
        inner_fn = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        inner_tc = type_only or (isinstance(child, ast.If) and _is_type_checking(child))
        yield from _walk(child, inner_fn, inner_tc)


def imports_of(path: Path) -> Iterator[Import]:
    source = module_name(path)
    package = source if path.name == "__init__.py" else source.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(), filename=str(path))
    for node, in_function, type_only in _walk(tree, False, False):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # `from dreamer.kernel import core` names a module; keep the longer name when it is one.
            targets = [_submodule(module, alias.name) for alias in node.names]
        for target in targets:
            if target.startswith("dreamer.") and target.split(".")[1] in LAYERS:
                yield Import(source, target, path, node.lineno, in_function, type_only)


def _submodule(module: str, name: str) -> str:
    candidate = f"{module}.{name}"
    rel = candidate.split(".")[1:]
    base = ROOT.joinpath(*rel)
    if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
        return candidate
    return module


def python_files() -> Iterator[Path]:
    for layer in LAYERS:
        folder = ROOT / layer
        if folder.is_dir():
            yield from sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def all_imports() -> list[Import]:
    return [imp for path in python_files() for imp in imports_of(path)]


def cross_layer_counts(imports: list[Import]) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for imp in imports:
        if imp.source_layer != imp.target_layer:
            key = (imp.source_layer, imp.target_layer)
            counts[key] = counts.get(key, 0) + 1
    return counts


if __name__ == "__main__":
    for (a, b), n in sorted(cross_layer_counts(all_imports()).items()):
        print(f"{a:10} -> {b:10} {n}")
