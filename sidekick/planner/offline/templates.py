"""The example syntax: `{slot}`, `(a|b)` alternatives, `[optional words]`.

    "(add|put) {items} (to|on) [my|the] (grocery|shopping) list"

expands to every choice of the phrase alternatives ("how (do I|to) make {name}",
up to MAX_EXPANSIONS per example); alternatives of one word each ("(on|to)")
stay one element that matches any of them, and optional parts stay in place,
marked optional, so neither multiplies the patterns. Groups nest. An example whose brackets do not balance is read
as plain words (its slots still count), never refused: examples come from
agents, and one careless phrase must not hide the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import product

MAX_EXPANSIONS = 48
_SLOT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Piece:
    """A run of literal text, or a slot, in one expansion of an example."""

    text: str | None
    slot: str | None
    optional: bool
    choices: tuple[str, ...] = ()  # "(on|to)": one word that may be any of these


class _Malformed(ValueError):
    pass


# AST: ("seq", [nodes]) | ("alt", [seq, ...]) | ("opt", seq) | ("slot", name) | ("text", str)
def _parse(example: str) -> tuple:
    pos = 0

    def seq(closers: str) -> tuple:
        nonlocal pos
        nodes: list[tuple] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                nodes.append(("text", "".join(buf)))
                buf.clear()

        while pos < len(example):
            ch = example[pos]
            if ch in closers:
                break
            if ch == "{":
                end = example.find("}", pos)
                if end < 0:
                    raise _Malformed("unclosed {")
                name = example[pos + 1 : end].strip()
                if not _SLOT.match(name):
                    raise _Malformed("bad slot")
                flush()
                nodes.append(("slot", name))
                pos = end + 1
            elif ch == "(":
                flush()
                pos += 1
                branches = [seq("|)")]
                while pos < len(example) and example[pos] == "|":
                    pos += 1
                    branches.append(seq("|)"))
                if pos >= len(example) or example[pos] != ")":
                    raise _Malformed("unclosed (")
                pos += 1
                nodes.append(("alt", branches))
            elif ch == "[":
                flush()
                pos += 1
                branches = [seq("|]")]
                while pos < len(example) and example[pos] == "|":  # "[my|the]": optional alternatives
                    pos += 1
                    branches.append(seq("|]"))
                if pos >= len(example) or example[pos] != "]":
                    raise _Malformed("unclosed [")
                pos += 1
                inner = branches[0] if len(branches) == 1 else ("seq", [("alt", branches)])
                nodes.append(("opt", inner))
            elif ch in ")]|}":
                raise _Malformed(f"stray {ch}")
            else:
                buf.append(ch)
                pos += 1
        flush()
        return ("seq", nodes)

    tree = seq("")
    if pos != len(example):
        raise _Malformed("trailing text")
    return tree


def _plain(example: str) -> tuple:
    """The malformed example as words and slots, its grammar characters dropped."""
    nodes: list[tuple] = []
    for part in re.split(r"(\{[A-Za-z_][A-Za-z0-9_]*\})", example):
        if part.startswith("{") and part.endswith("}"):
            nodes.append(("slot", part[1:-1]))
        elif part:
            nodes.append(("text", re.sub(r"[(){}\[\]|]", " ", part)))
    return ("seq", nodes)


def _expand(node: tuple, optional: bool) -> list[list[Piece]]:
    kind = node[0]
    if kind == "text":
        return [[Piece(node[1], None, optional)]]
    if kind == "slot":
        return [[Piece(None, node[1], optional)]]
    if kind == "opt":
        return _expand(node[1], True)
    if kind == "alt":
        words = [_single_word(branch) for branch in node[1]]
        if all(w is not None for w in words):
            # Alternatives of one word each stay one element: "(on|to)" does not double the patterns.
            chosen = tuple(w for w in words if w)
            if not chosen:
                return [[]]
            return [[Piece(None, None, optional or "" in words, chosen)]]
        out: list[list[Piece]] = []
        for branch in node[1]:
            pieces = _expand(branch, optional)
            for p in pieces:
                # An empty branch, "(a|)", makes the group optional.
                out.append(p)
            if len(out) >= MAX_EXPANSIONS:
                break
        return out[:MAX_EXPANSIONS]
    parts = [_expand(child, optional) for child in node[1]]
    combos: list[list[Piece]] = []
    for choice in product(*parts):
        combos.append([piece for group in choice for piece in group])
        if len(combos) >= MAX_EXPANSIONS:
            break
    return combos


def _single_word(branch: tuple) -> str | None:
    """The one word a branch of alternatives is, "" for an empty branch, None otherwise."""
    nodes = branch[1]
    if not nodes:
        return ""
    if len(nodes) == 1 and nodes[0][0] == "text":
        words = nodes[0][1].split()
        if len(words) == 1 and re.fullmatch(r"[A-Za-z]+", words[0]):
            return words[0]
        if not words:
            return ""
    return None


def expand(example: str) -> list[list[Piece]]:
    """Every expansion of one example, each a list of literal runs and slots."""
    try:
        tree = _parse(example)
    except _Malformed:
        tree = _plain(example)
    return [pieces for pieces in _expand(tree, False) if pieces]


def slots_of(example: str) -> list[str]:
    """The slot names an example mentions, in order."""
    return re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", example)
