"""Cutting a file into chunks along its functions and classes, and words into search terms.

Python is cut with `ast`: each function and method is a chunk, a class's own
chunk is its header up to its first method, and the module's remaining lines
are cut into windows. Other languages are cut where a line at the outer
indentation starts a definition (function, class, fn, func, def, ...), and
into windows of lines where none is found. tree-sitter grammars are not used
yet (the issue makes them optional): that is the place to add them.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass

WINDOW = 60  # lines in a chunk that is not a definition
MAX_CHUNK_LINES = 400  # a longer definition is split into windows of this many lines
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_DEF_LINE = re.compile(
    r"^(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:static\s+)?"
    r"(?:function\*?|class|interface|struct|enum|trait|impl|fn|func|def|type|module|object|const\s+\w+\s*=\s*(?:async\s*)?\()"
    r"\s*[\w(]"
)
STOP = frozenset(
    ["the", "a", "an", "and", "or", "of", "to", "in", "is", "it", "for", "on", "with", "as", "by", "be", "this", "that", "self", "cls", "return", "if", "else", "elif", "not", "none", "true", "false", "from", "import", "def", "class", "pass", "none", "let", "var", "const", "new", "public", "private", "protected", "static", "void", "int", "str"]
)


@dataclass(frozen=True)
class Chunk:
    name: str  # "Class.method", "function", or "lines 1-60"
    kind: str  # function | class | method | block
    start: int  # first line, 1-based
    end: int  # last line


def terms(text: str) -> list[str]:
    """Search terms: identifiers whole and split at case changes and underscores, lowercased."""
    out: list[str] = []
    for word in _IDENT.findall(text):
        lower = word.lower()
        if len(lower) > 1 and lower not in STOP:
            out.append(lower)
        parts = [p.lower() for piece in word.split("_") for p in _CAMEL.findall(piece)]
        if len(parts) > 1:
            out.extend(p for p in parts if len(p) > 1 and p not in STOP)
    return out


def _windows(start: int, end: int, name_prefix: str = "lines", size: int = WINDOW) -> list[Chunk]:
    return [Chunk(f"{name_prefix} {s}-{min(end, s + size - 1)}", "block", s, min(end, s + size - 1))
            for s in range(start, end + 1, size)]


def _python(text: str, total: int) -> list[Chunk] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: list[Chunk] = []
    covered: set[int] = set()

    def definition(node: ast.AST, prefix: str, kind: str) -> None:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        end = node.end_lineno or node.lineno
        name = f"{prefix}{node.name}"
        if isinstance(node, ast.ClassDef):
            inner = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
            head_end = (min(min([n.lineno] + [d.lineno for d in n.decorator_list]) for n in inner) - 1) if inner else end
            found.append(Chunk(name, "class", start, max(start, head_end)))
            covered.update(range(start, max(start, head_end) + 1))
            for child in inner:
                definition(child, f"{name}.", "method" if not isinstance(child, ast.ClassDef) else "class")
            return
        if end - start + 1 > MAX_CHUNK_LINES:
            found.extend(Chunk(f"{name} ({c.name})", kind, c.start, c.end) for c in _windows(start, end, "lines", MAX_CHUNK_LINES))
        else:
            found.append(Chunk(name, kind, start, end))
        covered.update(range(start, end + 1))

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            definition(node, "", "function" if not isinstance(node, ast.ClassDef) else "class")
    # What no definition covers (imports, constants, scripts), in windows of runs.
    run_start = None
    for line in range(1, total + 2):
        free = line <= total and line not in covered
        if free and run_start is None:
            run_start = line
        elif not free and run_start is not None:
            found.extend(_windows(run_start, line - 1))
            run_start = None
    return sorted(found, key=lambda c: (c.start, c.end))


def _generic(lines: list[str]) -> list[Chunk]:
    starts = [i + 1 for i, line in enumerate(lines) if _DEF_LINE.match(line)]
    if not starts:
        return _windows(1, len(lines)) if lines else []
    found: list[Chunk] = []
    if starts[0] > 1:
        found.extend(_windows(1, starts[0] - 1))
    for index, start in enumerate(starts):
        end = (starts[index + 1] - 1) if index + 1 < len(starts) else len(lines)
        match = re.search(r"(?:function\*?|class|interface|struct|enum|trait|impl|fn|func|def|type|module|object|const)\s+(?:\([^)]*\)\s*)?([\w.]+)", lines[start - 1])
        name = match.group(1) if match else f"line {start}"
        if end - start + 1 > MAX_CHUNK_LINES:
            found.extend(Chunk(f"{name} ({c.name})", "block", c.start, c.end) for c in _windows(start, end, "lines", MAX_CHUNK_LINES))
        else:
            found.append(Chunk(name, "function", start, end))
    return found


def chunk_file(path: str, text: str) -> list[tuple[Chunk, Counter[str]]]:
    """The chunks of one file, each with the counts of its terms (the path and name count too)."""
    lines = text.splitlines()
    chunks = _python(text, len(lines)) if path.endswith((".py", ".pyi")) else None
    if chunks is None:
        chunks = _generic(lines)
    path_terms = terms(path.replace("/", " ").replace(".", " "))
    out = []
    for chunk in chunks:
        body = "\n".join(lines[chunk.start - 1 : chunk.end])
        counts = Counter(terms(body))
        # A chunk's own name and file say most about it: they count three times over.
        for term in terms(chunk.name) * 3 + path_terms:
            counts[term] += 1
        if counts:
            out.append((chunk, counts))
    return out
