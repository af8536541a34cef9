"""A request said in the negative: "don't put bread on the list", "no need to add eggs".

Read as written, the words fit the call they deny, and the call would run. A message that opens
by telling Sidekick not to do something asks for nothing of an agent; the answer says what will
not be done, in the user's words. "Don't forget to add milk" and "don't let me forget ..." are
the opposite (a request said as a reminder), so they are not denials.
"""

from __future__ import annotations

import re

from dreamer.sidekick.planner.language.values import tidy_text

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


# The thing named first, then the denial about it: "we're good on paper towels, don't add it", "milk not
# required, please don't add to grocery".
_AFTER_THING = re.compile(r"^(?P<thing>[^,;]+)[,;]\s*(?P<denial>[^,;]+)$")
_POINTS_BACK = re.compile(r"^(?P<verb>\w+)(?:\s+(?:it|them|that|those|these))?(?P<rest>(?:\s+(?:to|on|onto|in|into)\b.*)?)$",
                          re.IGNORECASE)


def denied(text: str) -> tuple[str, list[str]] | None:
    """(what not to do, the clauses said after it) for a request said in the negative; None otherwise."""
    m = _NEGATED.match(text.strip())
    if m is None:
        return _denied_after_thing(text)
    first, *after = [_INSTEAD_LEAD.sub("", c.strip()) for c in _INSTEAD.split(m.group("rest").strip()) if c.strip()]
    return first.rstrip(" .!?"), after


def wont(what: str) -> str:
    """"OK, I won't put bread on your list." from "put bread on my list"."""
    words = [_YOURS.get(w.casefold(), w) for w in what.split()]
    return f"OK, I won't {' '.join(words)}."


def _denied_after_thing(text: str) -> tuple[str, list[str]] | None:
    """"we're good on paper towels, don't add it": what is not to be done, with the thing in the pronoun's
    place, without the state said around it ("add paper towels")."""
    shape = _AFTER_THING.match(text.strip().rstrip(".!"))
    if shape is None:
        return None
    m = _NEGATED.match(shape.group("denial").strip())
    if m is None:
        return None
    command = _POINTS_BACK.match(m.group("rest").strip().rstrip(" .!?"))
    if command is None or not (command.group("rest") or command.group(0).strip().casefold() != command.group("verb").casefold()):
        # "milk, don't add eggs": a denial of its own thing; "check the pages now, don't wait": of no thing
        return None
    thing = tidy_text(shape.group("thing").strip(), item=True)
    return " ".join(f"{command.group('verb')} {thing}{command.group('rest')}".split()), []
