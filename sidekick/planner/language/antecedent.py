"""A thing said first and a command about it after: "we're out of soda, add it to the list".

People often name the thing in one clause and give the command in the next, pointing back
with "it" or "them". The command decides what to do; the thing is what the pronoun stands
for. Read as the command with the thing in the pronoun's place: "add we're out of soda to
the list" (the value is tidied later: language.values drops "we're out of").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# "<thing>, <one or two command words> it|them <the rest>"; the command words do not include a
# pronoun themselves, and the thing clause has no comma of its own (a list of things is no clause).
# The clause is split off in Python, not by a leading lazy group: that one backtracked
# polynomially on long runs of spaces (tests/security/test_regex_backtracking.py).
_COMMAND = re.compile(
    r"(?:and\s+|so\s+|please\s+|can you\s+|could you\s+)?"
    r"(?P<verb>[a-z]+(?:\s+(?:up|down|off|out|on|in))?)\s+(?:it|them)\b(?P<rest>[^,;]*)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Shape:
    thing: str
    verb: str
    rest: str


def _shape(text: str) -> _Shape | None:
    cut = min((i for i in (text.find(","), text.find(";")) if i >= 0), default=-1)
    if cut < 0:
        return None
    thing = text[:cut].strip()
    if not thing or any(c in thing for c in ".!?"):
        return None
    m = _COMMAND.fullmatch(text[cut + 1:].strip())
    if m is None:
        return None
    return _Shape(thing, m.group("verb"), m.group("rest"))


def resolve_pronoun(text: str) -> str | None:
    """The message with the pronoun replaced by the clause it points back to, or None."""
    m = _shape(text)
    if m is None:
        return None
    thing = m.thing
    rest = m.rest.strip().rstrip(".!?")
    return " ".join(f"{m.verb} {thing} {rest}".split())
