"""A remark: the user saying how something is or was ("the meeting ran way over, so annoying", "my mum's
grocery list is always a mess haha"), asking nothing.

Such a message names things agents hold (a meeting, a list, notes, recipes), so a function's words fit
it and its values take the rest: the list gets "is always a mess haha", the calendar an event "ran way
over". What gives it away is that the words of judgement or feeling end up inside a value: nobody puts
"rubbish" on a list or calls an event "so annoying". A message that opens with a command, asks a
question, or says it needs something is never a remark.
"""

from __future__ import annotations

import re

# Words that judge or feel, never a thing to get, a title or a task's words. (Not "love", "great" or
# "best": "love heart sweets", "the Great British Bake Off", "best before".)
JUDGING = frozenset({
    "annoying", "rubbish", "mess", "messy", "terrible", "awful", "horrible", "boring", "useless", "hate", "hated",
    "haha", "hahaha", "lol", "lmao", "rofl", "ugh", "sigh", "disaster", "nightmare", "stressful", "exhausting",
    "sucks", "sucked", "ridiculous", "frustrating", "infuriating", "hopeless", "never", "worst", "pathetic",
    "overrated", "crap", "dreadful", "tedious", "irritating", "shambles", "so", "haiya", "aiyo",
    "honestly", "always",
    # feeling, glad or not: "my manager finally approved my PTO, woohoo", "it's been rough", "so satisfying"
    "typical", "woohoo", "yay", "yippee", "satisfying", "scary", "rough", "delicious", "yummy", "stressed",
    "exhausted", "knackered", "gutted", "chuffed", "stoked", "bummed", "kinda",
    # South Africa's dismay and the north of England's: "load shedding again, eish"
    "eish", "yoh", "jeez", "blimey", "mental", "insane", "bonkers",
})
# A word of these, with another of JUDGING, is judgement; alone ("so", "always", "never", "honestly") it
# is an ordinary word of a value ("so-so", "always fresh bread").
_WEAK = frozenset({"so", "always", "never", "honestly"})
REMARK_REPLY = "I hear you. If there's something I can do about it, just say."


def judging_words(values: set[str]) -> set[str]:
    """The words of judgement among a plan's value words; the weak ones only beside a strong one."""
    found = values & JUDGING
    return found if found - _WEAK else set()


# What one runs out of that no shop sells: "I'm out of patience", "we ran out of steam", "low on energy today".
# Said so, running out is a feeling, not a thing for the list.
_LACKED = re.compile(
    r"\b(?:out of|outta|run out of|ran out of|running out of|running low on|low on|short on|no more)\s+"
    r"(?:all\s+|my\s+|our\s+|the\s+)?(?P<what>patience|time|energy|steam|ideas|road|luck|options|excuses|breath"
    r"|words|puff|motivation|inspiration|spoons|sleep)"
    # (the word ends what is lacked: "energy drinks" and "time-saver" are things)
    r"(?=\s*$|\s*[,.!?;]|\s+(?:for|with|on|in|at|to|today|tonight|now|again|already|halfway|here|there|lately"
    r"|this|ugh|lol|honestly|tbh)\b)", re.IGNORECASE)


def lacked_no_things(text: str) -> set[str]:
    """What the speaker says they are out of that no one buys ("we ran out of steam halfway": {"steam"})."""
    return {m.group("what").casefold() for m in _LACKED.finditer(text)}


# Sayings whose verbs are functions' words but mean nothing of the kind: "remember when we went to Raglan",
# "let's move on from that", "let's take this offline", "move over", "cancel culture".
_SAYINGS = re.compile(r"^\s*(?:remember when\b|let'?s (?:move on|take (?:this|it|that) offline|circle back|park (?:this|that))\b"
                      r"|move over\b|cancel culture\b)", re.IGNORECASE)


def a_saying(text: str) -> bool:
    """The message opens with a saying that only looks like a request ("remember when we went to Raglan")."""
    return _SAYINGS.match(text) is not None
