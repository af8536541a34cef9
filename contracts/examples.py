"""What a bundle's examples may cost Sidekick, checked at install (issue 24, finding 3).

Sidekick expands each example's phrase alternatives ("how (do I|to) make {name}")
into patterns and fits messages against them, so examples are work for the
kernel: 40 functions x 50 examples with six groups of alternatives each once
took 33 s and 800 MB to index. This module counts the patterns an example
becomes, with the planner's rule (sidekick/planner/offline/templates.py: a group
of one-word alternatives, "(on|to)", stays one element; a group with longer
alternatives counts each; groups in a row multiply), without building them, and
refuses a bundle past the limits below with one sentence naming the limit.
tests/bundles/test_example_cost.py checks this count against the planner's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

MAX_EXPANSIONS_PER_EXAMPLE = 48  # = the planner's MAX_EXPANSIONS: more are dropped there anyway
MAX_EXAMPLES_PER_BUNDLE = 600  # examples of all functions together
MAX_PATTERNS_PER_BUNDLE = 3000  # patterns all examples of the bundle expand to
_CAP = 10**6  # counting stops growing here (a count past every limit is past every limit)
_ONE_WORD = re.compile(r"\s*[A-Za-z]*\s*")


def _count(text: str, pos: int, closers: str) -> tuple[int, int]:
    """(patterns of the sequence starting at pos, position of its closer or the end)."""
    total = 1
    while pos < len(text) and text[pos] not in closers:
        ch = text[pos]
        if ch in "([":
            close = ")" if ch == "(" else "]"
            branches: list[int] = []
            single = True
            pos += 1
            while True:
                start = pos
                n, pos = _count(text, pos, "|" + close)
                branches.append(n)
                single = single and n == 1 and _ONE_WORD.fullmatch(text[start:pos]) is not None
                if pos < len(text) and text[pos] == "|":
                    pos += 1
                    continue
                break
            if pos >= len(text):
                return total, pos  # unbalanced: the planner reads it as plain words, one pattern
            pos += 1
            if not single:
                total = min(total * sum(branches), _CAP)
        elif ch == "{":
            end = text.find("}", pos)
            pos = end + 1 if end >= 0 else len(text)
        else:
            pos += 1
    return total, pos


def expansions(example: str) -> int:
    """How many patterns the planner makes of one example (before its own cap of MAX_EXPANSIONS)."""
    count, pos = _count(example, 0, "")
    if pos < len(example) or example.count("(") != example.count(")") or example.count("[") != example.count("]"):
        return 1  # malformed: read as plain words
    return count


def check_costs(functions: Sequence[Any], file_name: str = "functions.json") -> str | None:
    """The one-sentence reason these functions' examples cost too much, or None."""
    examples = 0
    patterns = 0
    for spec in functions:
        for example in spec.examples:
            n = expansions(example)
            if n > MAX_EXPANSIONS_PER_EXAMPLE:
                return (f"{file_name}: an example of function {spec.name!r} expands to {min(n, _CAP)} phrases, more "
                        f"than the limit of {MAX_EXPANSIONS_PER_EXAMPLE}; use fewer groups of alternatives in it.")
            examples += 1
            patterns += n
    if examples > MAX_EXAMPLES_PER_BUNDLE:
        return (f"{file_name}: the bundle's functions have {examples} examples, more than the limit of "
                f"{MAX_EXAMPLES_PER_BUNDLE}; keep the ones that show how people ask.")
    if patterns > MAX_PATTERNS_PER_BUNDLE:
        return (f"{file_name}: the bundle's examples expand to {patterns} phrases, more than the limit of "
                f"{MAX_PATTERNS_PER_BUNDLE}; use fewer alternatives or fewer examples.")
    return None
