"""Entries written as "label: value", the way list apps and other assistants take them.

"shopping list: baking soda", "calendar: dinner with Maria on thursday at 6pm",
"todo: call the bank". The label names where the value goes; the request is to add it
there. Read as "add <value> to my <label>" when the message as written fits nothing.
"""

from __future__ import annotations

import re

from dreamer.sidekick.planner.language.lexicon import QUESTION_WORDS

# The colon is followed by a space or the end of a word that is no web address: "pocket https://..." has no label.
_LABELLED = re.compile(r"^\s*([A-Za-z][A-Za-z' -]{0,30}?)\s*:(?!//)\s*(\S.*)$")
MAX_LABEL_WORDS = 3


def labelled_entry(text: str) -> str | None:
    """The request a "label: value" message stands for, or None when it is not one."""
    m = _LABELLED.match(text)
    if m is None:
        return None
    label, value = m.group(1).strip(), m.group(2).strip()
    if len(label.split()) > MAX_LABEL_WORDS or value.split()[0].casefold().split("'")[0] in QUESTION_WORDS:
        return None
    return f"add {value} to my {label}"
