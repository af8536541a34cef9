"""The install review's warning when a new agent's examples copy those of agents already installed.

A look-alike agent (issue 24, finding 10) copies another's examples to be chosen
for its requests. Sidekick keeps established agents' phrases on a tie; the
review also says it plainly before anything is installed. Examples are compared
as their words (slots as "{}", alternatives and optional brackets dropped),
case-insensitively.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from dreamer.contracts.functions import FunctionSpec
from dreamer.kernel.install.registry import InstalledAgent

_SLOT = re.compile(r"\{[^{}]*\}")
_GRAMMAR = re.compile(r"[()\[\]|]")
MIN_SHARED = 2  # shared phrases before the review warns (one common phrase, "help", is not copying)


def phrase(example: str) -> str:
    text = _SLOT.sub(" {} ", example.casefold())
    return " ".join(_GRAMMAR.sub(" ", text).split())


def _phrases(functions: Iterable[FunctionSpec]) -> set[str]:
    return {phrase(e) for f in functions if f.exported for e in f.examples}


def overlap_warnings(name: str, functions: Sequence[FunctionSpec], installed: Iterable[InstalledAgent]) -> list[str]:
    """One sentence per installed agent (other than `name`) whose examples this bundle repeats."""
    mine = _phrases(functions)
    out: list[str] = []
    for agent in installed:
        if agent.name == name:
            continue
        shared = mine & _phrases(agent.functions)
        if len(shared) >= MIN_SHARED:
            sample = "; ".join(f'"{p}"' for p in sorted(shared)[:3])
            out.append(f"{len(shared)} of its examples are the same as those of your agent {agent.name} (by "
                       f"{agent.publisher or 'an unknown publisher'}), such as {sample}: Sidekick keeps sending "
                       f"those requests to {agent.name}.")
    return out
