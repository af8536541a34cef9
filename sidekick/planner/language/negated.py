"""A request said in the negative: "don't put bread on the list", "no need to add eggs".

Read as written, the words fit the call they deny, and the call would run. A message that opens
by telling Sidekick not to do something asks for nothing of an agent; the answer says what will
not be done, in the user's words. "Don't forget to add milk" and "don't let me forget ..." are
the opposite (a request said as a reminder), so they are not denials.
"""

from __future__ import annotations

import re

_NEGATED = re.compile(
    r"^(?:please |pls |oh |and |but |no,? |actually,? )?"
    r"(?:don't|dont|do not|never|no need to|you don't need to|you dont need to|there's no need to|theres no need to"
    r"|you needn't|you need not)\s+(?!forget|let me forget|mind\b|worry|you dare)(?P<rest>\S.*)$",
    re.IGNORECASE,
)
# Told afterwards what to do instead: "don't add bread, add rolls instead" / "... but put rolls on".
_INSTEAD = re.compile(r"[,;]|\.\s")
_INSTEAD_LEAD = re.compile(r"^(?:but|just|instead|rather)\s+", re.IGNORECASE)
_YOURS = {"my": "your", "me": "you", "i": "you", "mine": "yours", "myself": "yourself", "i'm": "you're", "im": "you're"}


def denied(text: str) -> tuple[str, list[str]] | None:
    """(what not to do, the clauses said after it) for a request said in the negative; None otherwise."""
    m = _NEGATED.match(text.strip())
    if m is None:
        return None
    first, *after = [_INSTEAD_LEAD.sub("", c.strip()) for c in _INSTEAD.split(m.group("rest").strip()) if c.strip()]
    return first.rstrip(" .!?"), after


def wont(what: str) -> str:
    """"OK, I won't put bread on your list." from "put bread on my list"."""
    words = [_YOURS.get(w.casefold(), w) for w in what.split()]
    return f"OK, I won't {' '.join(words)}."
