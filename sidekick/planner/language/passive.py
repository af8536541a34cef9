"""A wish said about the thing, turned into the command: "I'd like shortbread added to my list".

People, formal ones especially, name the thing first and the action as a past participle after
it: "I would like shortbread added to my grocery list", "we want the dentist moved to friday",
"I need the milk taken off". Read as the command it stands for ("add shortbread to my grocery
list"), every function's patterns apply as they do to the plain imperative.
"""

from __future__ import annotations

import re

# The participle, and the imperative it stands for.
_ACTIVE = {
    "added": "add", "put": "put", "placed": "put", "written": "write", "written down": "write down",
    "removed": "remove", "taken off": "take off", "deleted": "delete", "crossed off": "cross off",
    "saved": "save", "noted": "note", "noted down": "note down", "moved": "move", "cancelled": "cancel",
    "canceled": "cancel", "booked": "book", "scheduled": "schedule", "ticked off": "tick off",
}
_PARTICIPLES = "|".join(sorted((re.escape(p) for p in _ACTIVE), key=len, reverse=True))
# One lazy group, then fixed words: a linear scan over user text (tests/security/test_regex_backtracking.py).
_WISH = re.compile(
    r"^(?:(?:i|we)(?: would|'d| really)? (?:like|love|want|need)|can i have|could i have|could i get|can i get"
    r"|please have|please get)\s+"
    # not "I want that you put tomatoes ...": a clause of its own, with its own verb
    # (and within its clause: "I want to be buying yam, put it for the list" is two)
    rf"(?!that\b|you\b)(?P<thing>[^\s,;.][^,;.]*?)\s+(?P<done>{_PARTICIPLES})\b(?P<rest>.*)$",
    re.IGNORECASE,
)
MAX_CHARS = 300  # a wish is a sentence; a longer message is read as it is


def as_command(text: str) -> str | None:
    """The imperative a wish about a thing stands for, or None when `text` is no such wish."""
    if len(text) > MAX_CHARS:
        return None
    m = _WISH.match(text.strip())
    if m is None:
        return None
    verb = _ACTIVE[m.group("done").casefold()]
    return " ".join(f"{verb} {m.group('thing')}{m.group('rest')}".split())
