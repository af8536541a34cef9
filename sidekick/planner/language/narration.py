"""A clause that tells what happened: "our freezer died overnight", "the kids were up half the night",
"we lost almost everything", "picked them up on the way home".

Said before a request, such a clause is the story that led to it, never a request of its own; said after a
pronoun's comma, it reports ("..., bought them already") and points at nothing. A verb of the past is what
gives it away: a request is said in the imperative or with a modal ("add", "can you put").
"""

from __future__ import annotations

import re

# Past forms that do not end in -ed.
_PAST_FORMS = frozenset({"got", "bought", "found", "took", "ate", "had", "did", "made", "brought", "gave", "left",
                         "forgot", "threw", "sold", "drank", "done", "was", "were", "went", "came", "lost", "broke",
                         "ran", "fell", "saw", "said", "told", "spent", "sent", "thought", "knew", "kept", "slept"})
# Words in -ed that are no past: "need", "bed", "shed" ...
_NOT_PAST = frozenset({"need", "feed", "weed", "seed", "speed", "bleed", "breed", "shed", "bed", "red", "shred",
                       "embed", "exceed", "proceed", "succeed", "indeed"})
# Who or what it happened to, first: a person, or "my/our/the <thing>".
_TELLER = frozenset({"i", "we", "you", "he", "she", "they", "it", "everyone", "everybody", "somebody", "someone",
                     "kids", "my", "our", "the", "his", "her", "their"})
MAX_SUBJECT_WORDS = 3


def past_form(word: str) -> bool:
    """`word` (lower case) is a verb's past form."""
    return word in _PAST_FORMS or (word.endswith("ed") and word not in _NOT_PAST and len(word) > 4)


def narrates(clause: str) -> bool:
    """The clause opens with who or what it is about, then a verb of the past: it tells, it asks nothing."""
    words = re.findall(r"[a-z']+", clause.casefold())
    if not words or words[0] not in _TELLER:
        return False
    return any(past_form(w) for w in words[1:1 + MAX_SUBJECT_WORDS + 1])
