"""A message written over several lines: a list pasted or typed one thing a line.

People paste a list from a note or type it one thing per line, with bullets or numbers:

    add these to the shopping list:
    - milk
    - eggs

The planner reads one line of words, so the message is first put on one line as it would be typed
there: the bullets and numbers go, and a line break between two things is the comma between them
("add these to the shopping list: milk, eggs"). A line that ends a sentence or opens a list (":")
needs no comma after it. Every pattern here is anchored to one line and has no nested repetition
(tests/security/test_regex_backtracking.py).
"""

from __future__ import annotations

import re

# A list's mark at the start of a line: a bullet, a number with its stop ("1.", "2)"), a box ("[ ]").
# (A number with no stop is a quantity: "2 lemons".)
_MARK = re.compile(r"^(?:[-*•·–—+▪◦‣>]|\d{1,2}[.)]|\[[ xX]?\])\s*")
# A first line that only names where the things go is the list's heading: "groceries", "Shopping list", "to-do".
_HEADING = re.compile(r"^(?:[\w'-]+ ){0,2}(?:list|groceries|grocery|shopping|to-?dos?|tasks|calendar|notes)\W*$", re.IGNORECASE)
MAX_LINES = 40  # a longer message is not a list anyone dictates to an assistant; its lines are joined as they are


def on_one_line(text: str) -> str:
    """`text` on one line, its list marks gone and its line breaks read as commas; unchanged when it is one line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return text
    marked = [_MARK.sub("", line, count=1) if n < MAX_LINES else line for n, line in enumerate(lines)]
    joined = marked[0]
    if _HEADING.match(joined) and not joined.endswith(":"):
        joined = joined.rstrip(" .,;") + ":"
    for line in marked[1:]:
        if not line:
            continue  # a mark alone on its line
        joined += " " if joined.endswith((":", ",", ";", ".", "!", "?")) else ", "
        joined += line
    return joined
