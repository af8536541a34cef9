"""A correction inside the message itself: "add eggs, no wait, two dozen eggs", "put milk, I mean
oat milk, on the list".

Said aloud or typed in a hurry, people fix a word as they go. Read as written, both the first
word and its correction land in the call. The correction replaces the last thing said before
it; what follows the correction (" to the list") stays.
"""

from __future__ import annotations

import re

# The words that take back what was just said. Only phrases that cannot open a value: a lone "no"
# or "actually" can ("no-bake cheesecake", "actually good coffee").
_TAKE_BACK = re.compile(
    r"(?<=[\s,])(?:no,? wait|wait,? no|no,? actually|actually,? no|no sorry|sorry,? i mean|sorry,? i meant"
    r"|i mean|i meant|or rather|make that|scratch that|correction|no no|wait|sorry)(?=[\s,])",
    re.IGNORECASE,
)


# What introduces the correction itself: "butter... no actually make it ghee", "wait, change it to oat milk".
_LEAD = re.compile(r"^(?:make it|make that|change it to|change that to|it should be|should be)\s+(?=\S)", re.IGNORECASE)


def split_correction(text: str) -> tuple[str, str] | None:
    """(what was said before the last take-back, the correction and what follows it); None when the
    message takes nothing back."""
    found = list(_TAKE_BACK.finditer(text))
    if not found:
        return None
    m = found[-1]
    before, after = text[: m.start()].strip(" ,.…"), _LEAD.sub("", text[m.end():].strip(" ,"))
    if not before or not after:
        return None
    return before, after


def corrected(before: str, said_last: str, after: str) -> str | None:
    """`before` with its last mention of `said_last` replaced by the correction `after`."""
    at = before.casefold().rfind(said_last.casefold())
    if at < 0:
        return None
    return f"{before[:at]}{after}{before[at + len(said_last):]}"
