"""Corrections said in words the follow-up patterns do not list, put in words they do.

"oh shoot I meant Frosted Flakes", "nah make that root beer", "correction: mozzarella, not cheddar",
"no yaar, jaggery not sugar", "sorry, wrong one, limes I mean": each takes back the last value and
gives another. The replace patterns (followups.REPLACE) read "sorry, I meant X", "no, make that X",
"sorry, X, not Y"; this module rewrites the other ways of saying it into those, one fixed phrase at
a time (no pattern here repeats a group, so nothing backtracks).
"""

from __future__ import annotations

import re

from dreamer.sidekick.planner.language.chunks import INTERJECTIONS

# A dismayed word or two that opens a correction: read as "sorry". (Not "ugh": "ugh mondays" is a sigh.)
_DISMAY = re.compile(
    r"^(?:oh )?(?:shoot|dang|darn|crap|shucks|my bad|whoops|oh no|ah man|aw man|correction|mistake|my mistake"
    # what was wrong, and who made it so: "oops wrong day, make it Friday 4pm", "ugh autocorrect, I meant dates"
    r"|(?:oops |whoops |sorry )?wrong (?:day|time|date|one|item|thing|list|name)|(?:ugh |stupid |damn )?autocorrect|typo"
    r"|wrong|sorry wrong)\b[ ,.!:;-]{0,3}",
    re.IGNORECASE)
# "nah", "naw": read as "no".
_NAH = re.compile(r"^(?:nah|naw|nahh)\b", re.IGNORECASE)
# Whom it is said to, or that the last one was wrong, right after the first word: "no yaar, ...",
# "sorry, wrong one, ...".
_AFTER_LEAD = re.compile(
    r"^(?P<lead>no|sorry|oops|actually|wait)[ ,.!]{1,3}(?:yaar|bro|man|dude|mate|love|hon|wrong one|wrong item"
    r"|wrong thing|not that one|that's wrong|thats wrong)\b[ ,.!]{0,3}", re.IGNORECASE)
# "limes I mean": the value before "I mean" (cut in code: nothing to backtrack).
_LEAD = re.compile(r"^(?:no|sorry|oops|actually|wait)[ ,.!]{1,3}", re.IGNORECASE)
_MEAN_ENDINGS = (" i mean", " i meant", ", i mean", ", i meant")


# Words that give the new value: after them, ", not Y" only says what the old one was.
_OFFERS = re.compile(r"\b(?:make (?:that|it)|i mean|i meant|change (?:that|it) to)\s", re.IGNORECASE)


# A second language's "is not X, is Y" ("Sorry, is not ricotta, is mascarpone") and "I want say X" (I mean X).
_IS_NOT = re.compile(r"^(?:(?:sorry|no|oops|actually)[ ,.!]{1,3})?(?:it )?is not [^,]{1,60}, (?:it )?is (?=\S)",
                     re.IGNORECASE)
_WANT_SAY = re.compile(r"\bi want(?: to)? say\b", re.IGNORECASE)
# What stays as it was, said after the new value: "sorry, I meant Tuesday, same time".
_SAME_ENDINGS = (", same time", ", same place", " same time", ", same time please", ", same everything")


# A sound before the word that takes the last value back, in other Englishes: "aye, no, ...", "arre no, ...".
_SOUNDS = INTERJECTIONS | frozenset({"aye", "ay", "arre", "arey", "och", "ach", "eh", "ehn", "ahh", "mm", "hmm"})
_TAKING_BACK = frozenset({"no", "nope", "nah", "naw", "sorry", "oops", "actually", "wait", "wrong"})
# "I wanted X" said right after taking the last value back is "I meant X" ("Sorry, mistake. I wanted hummus").
_WANTED = re.compile(r"^(?P<lead>(?:no|sorry|oops|actually|wait)[ ,.!]{1,3}(?:(?:mistake|my mistake|my bad|wrong one)[ ,.!]{1,3})?)"
                     r"i wanted(?= \S)", re.IGNORECASE)


# What makes the rest a correction whatever sound came first: the new value offered, or the old one named.
_OFFERED = re.compile(r"\b(?:i meant|i mean|i wanted|make (?:that|it)|change (?:that|it) to|not)\b", re.IGNORECASE)


def _without_sound(text: str) -> str:
    """`text` without a sound said before the word that takes the last value back ("aye, no, I meant oatcakes",
    "arre no, ghee not paneer"); only where the rest offers a value ("yeah no worries" corrects nothing)."""
    words = text.split(" ", 2)
    if len(words) > 2 and words[0].strip(",.!").casefold() in _SOUNDS and words[0].strip(",.!").casefold() \
            not in _TAKING_BACK and words[1].strip(",.!").casefold() in _TAKING_BACK and _OFFERED.search(words[2]):
        return text[len(words[0]):].lstrip()
    return text


def as_correction(said: str) -> str:
    """`said` in the words of followups.REPLACE where it is a correction said otherwise; else unchanged."""
    text = _without_sound(" ".join(said.split()))
    text = _WANTED.sub("sorry, I mean", text)
    if (m := _IS_NOT.match(text)) is not None:
        text = "sorry, I meant " + text[m.end():]
    text = _WANT_SAY.sub("I mean", text)
    body = text.rstrip(" .!")
    ending = next((e for e in _SAME_ENDINGS if body.casefold().endswith(e)), None)
    if ending is not None and len(body) > len(ending):
        text = body[: len(body) - len(ending)]
    if (m := _DISMAY.match(text)) is not None and m.end() < len(text):
        text = "sorry, " + text[m.end():]
    text = _NAH.sub("no", text, count=1)
    if (m := _AFTER_LEAD.match(text)) is not None and m.end() < len(text):
        text = f"{m['lead']}, {text[m.end():]}"
    body = text.rstrip(".!")
    ending = next((e for e in _MEAN_ENDINGS if body.casefold().endswith(e)), None)
    if ending is not None:
        lead = _LEAD.match(body)
        value = body[lead.end() if lead else 0: len(body) - len(ending)].strip(" ,")
        if value and "," not in value:
            text = f"{lead.group(0) if lead else 'sorry, '}I mean {value}"
    head, sep, _ = text.rpartition(", not ")
    if sep and _OFFERS.search(head):
        text = head  # "make that mozzarella, not cheddar": what it was is said, what it is now is the value
    return text
