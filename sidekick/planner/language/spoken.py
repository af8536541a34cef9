"""What speech, dictation and regional words leave in a typed message, turned back into writing.

Many messages reach Sidekick through a phone's dictation: hesitations ("um", "uh"), spoken
punctuation ("eggs comma butter", "... full stop") and clock times spelt out ("four p m").
None of this is ever what the user asks for, in any domain, so it is rewritten once, before
anything reads the message, into what the user would have typed.

Every pattern here is a single word or a fixed-width group matched without nested
repetition: user text reaches them (tests/security/test_regex_backtracking.py).
"""

from __future__ import annotations

import re

from dreamer.sidekick.planner.language.lexicon import UNITS

# Hesitations, whole words only: never part of an item, a title or a question.
# Not "er": it is also the ER, an emergency room.
_HESITATIONS = frozenset({"um", "umm", "ummm", "uh", "uhh", "uhm", "erm", "ehm", "hmm", "hmmm", "mmm"})

# "comma" is punctuation between two words, except where the word itself is meant ("the oxford comma").
_COMMA_WORD_BEFORE = frozenset({"the", "a", "oxford", "serial", "this", "that", "inverted"})
# "period" / "full stop" at the very end closes the sentence, except where it is the thing ("my period",
# "the trial period").
_PERIOD_WORD_BEFORE = frozenset({"the", "a", "my", "her", "this", "that", "trial", "grace", "waiting", "notice",
                                 "free", "cooling", "billing", "time", "first", "second", "third", "last", "next"})

_HOURS = {word: n for word, n in UNITS.items() if 1 <= n <= 12 and word not in ("a", "an", "single", "dozen")}
# "a m" / "p m" / "a.m" spelt apart by dictation; the number before is read in Python.
_SPOKEN_MERIDIEM = re.compile(r"\b(\w+)(?: o'clock)? ([ap])\.? ?m\b\.?", re.IGNORECASE)
# Regional words for parts of the day: "tomorrow arvo" is tomorrow afternoon ("for tea", the evening
# meal in Britain and Australia, is read in as_written).
_DAY_PARTS = {"arvo": "afternoon", "avo": "afternoon"}


def as_written(text: str) -> str:
    """`text` with hesitations dropped, spoken punctuation written and spoken clock times in digits;
    unchanged when nothing else is said ("uh" alone is somebody thinking, which the dialogue reads)."""
    words = text.split(" ")
    kept: list[str] = []
    for n, word in enumerate(words):
        bare = word.strip(",.!?;:").casefold()
        if bare in _HESITATIONS:
            if kept and word.endswith((".", "!", "?")) and not kept[-1].endswith((".", "!", "?", ",")):
                kept[-1] += word[-1]
            continue  # "um, add eggs", "add um eggs": the hesitation and its comma go
        if bare == "comma" and kept and n + 1 < len(words) and kept[-1].casefold() not in _COMMA_WORD_BEFORE:
            kept[-1] = kept[-1].rstrip(",") + ","
            continue
        if bare in ("period", "stop") and _ends_sentence(words, n, kept):
            if bare == "stop":
                kept.pop()  # "full"
            if kept and not kept[-1].endswith((".", "!", "?")):
                kept[-1] = kept[-1].rstrip(",") + "."
            continue
        if bare == "tea" and kept and kept[-1].casefold() == "for" and _day_or_end(words[n + 1:]):
            word = word.casefold().replace("tea", "dinner")  # "what's for tea tomorrow": the evening meal
        if bare in _DAY_PARTS:
            word = word.casefold().replace(bare, _DAY_PARTS[bare])
        kept.append(word)
    written = _SPOKEN_MERIDIEM.sub(_clock, " ".join(w for w in kept if w))
    return written if any(c.isalnum() for c in written) else text


_DAY_WORDS = frozenset({"tonight", "today", "tomorrow", "this", "on", "next", "monday", "tuesday", "wednesday",
                        "thursday", "friday", "saturday", "sunday"})


def _day_or_end(rest: list[str]) -> bool:
    """Nothing but punctuation follows, or a day: "for tea?", "for tea on friday" (not "for tea bags")."""
    nxt = next((w.strip(",.!?;:").casefold() for w in rest if w.strip(",.!?;:")), "")
    return not nxt or nxt in _DAY_WORDS or bool(rest and rest[0][-1:] in ",.!?;:") or (
        bool(rest) and not rest[0].strip(",.!?;:"))


def _ends_sentence(words: list[str], n: int, kept: list[str]) -> bool:
    """The word at `n` ("period", or "stop" of "full stop") is the last one and ends a sentence."""
    if any(w.strip(",.!?;:") for w in words[n + 1:]):
        return False
    if words[n].strip(",.!?;:").casefold() == "stop":
        if not kept or kept[-1].casefold() != "full" or len(kept) < 2:
            return False
        before = kept[-2]
    else:
        if not kept:
            return False
        before = kept[-1]
    return before.strip(",.!?;:").casefold() not in _PERIOD_WORD_BEFORE


def _clock(m: re.Match[str]) -> str:
    said = m.group(1).casefold()
    hour = _HOURS.get(said) if not said.isdigit() else int(said)
    if hour is None or not 1 <= hour <= 12:
        return m.group(0)
    return f"{hour}{m.group(2).casefold()}m"
