"""Commands typed the way chat apps and command lines take them: "/notes search visa", "grocery ls".

People who live in Slack, Discord or a terminal write a list's name, then a short verb and its
argument. Read as the sentence it abbreviates ("search my notes for visa", "show my grocery
list"), every function's own patterns apply. Only a known place opens such a command, and only
a known short verb follows it (or none, after a slash): "grocery shopping on friday" is no command.
"""

from __future__ import annotations

import re

# The places a command may name, and how a sentence names them.
_PLACES = {
    "notes": "notes", "note": "notes", "todo": "to-do list", "todos": "to-do list", "tasks": "to-do list",
    "task": "to-do list", "cal": "calendar", "calendar": "calendar", "agenda": "calendar",
    "grocery": "grocery list", "groceries": "grocery list", "shopping": "shopping list", "list": "list",
    "groc": "grocery list", "grocs": "grocery list",
    "recipes": "recipes", "recipe": "recipes",
}
# Short verbs, and the sentence each stands for ({rest} is what follows, {place} the place).
_VERBS = {
    "ls": "show my {place} {rest}", "list": "show my {place} {rest}", "show": "show my {place} {rest}",
    "rm": "remove {rest} from my {place}", "del": "remove {rest} from my {place}",
    "remove": "remove {rest} from my {place}", "delete": "remove {rest} from my {place}",
    "add": "add {rest} to my {place}", "new": "add {rest} to my {place}",
    "search": "search my {place} for {rest}", "find": "search my {place} for {rest}",
    "recent": "show my {rest} most recent {place}", "latest": "show my {rest} most recent {place}",
    "done": "mark {rest} as done on my {place}", "finish": "mark {rest} as done on my {place}",
    "clear": "clear my {place}",
}
# After a slash and no verb: what the bare argument asks of each place.
_BARE = {"calendar": "what's on my calendar {rest}", "recipes": "how do I make {rest}"}
_BARE_DEFAULT = "add {rest} to my {place}"
_NOTHING_AFTER = "show my {place}"
MAX_WORDS = 40
_CLOCK = re.compile(r"\d{1,2}(?::\d{2})?(?:am|pm)?|at|noon|midday", re.IGNORECASE)


# A sign on the place's name, as a terse user adds or takes off: "groc- eggs", "groc+ rice", "todo+ call Sam".
_SIGNS = {"-": "rm", "+": "add"}
# "-oat milk from list": a thing taken off, the minus written on it.
_MINUS_FROM = re.compile(r"^-(?=\w)(.{1,120}?) from (?:the |my |our )?((?:[\w-]+ )?list)\W*$", re.IGNORECASE)
# "+limes": a thing added, the plus written on it (no place: the conversation's, or the one that takes things).
_PLUS_THING = re.compile(r"^\+(?=\w)([^+\n]{1,120})$")
# A day first after the calendar's name: "cal tmrw 9am dentist" puts the dentist in; "cal tmrw" shows the day.
_DAY_FIRST = frozenset({"today", "tonight", "tomorrow", "tmrw", "tmr", "tmw", "2moro", "2morrow", "mon", "tue", "tues",
                        "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "monday", "tuesday", "wednesday",
                        "thursday", "friday", "saturday", "sunday"})


def as_sentence(text: str) -> str | None:
    """The sentence a command-style message abbreviates, or None when `text` is no such command."""
    minus = _MINUS_FROM.match(text.strip())
    if minus is not None:
        return f"remove {minus.group(1).strip()} from my {minus.group(2)}"
    plus = _PLUS_THING.match(text.strip())
    if plus is not None:
        return f"add {plus.group(1).strip()}"  # "+limes": one more, where the conversation puts things
    words = text.split()
    if not words or len(words) > MAX_WORDS:
        return None
    if len(words[0]) > 1 and words[0][-1] in _SIGNS and words[0][:-1].casefold() in _PLACES:
        words = [words[0][:-1], _SIGNS[words[0][-1]], *words[1:]]  # "groc- eggs": "groc rm eggs"
    slash = words[0].startswith("/")
    place = _PLACES.get(words[0].lstrip("/").casefold())
    if place is None or (not slash and len(words) < 2):
        return None
    if len(words) > 1 and words[1].casefold() == "list" and place.endswith("list"):
        words = words[:1] + words[2:]  # "grocery list rm eggs": the place is two words
        if len(words) < 2:
            return _NOTHING_AFTER.format(place=place)  # "todo list" alone asks to see it
    verb = words[1].casefold() if len(words) > 1 else ""
    rest = " ".join(words[2:] if verb in _VERBS else words[1:])
    if verb in _VERBS:
        if "{rest}" in _VERBS[verb] and not rest and verb not in ("ls", "list", "show", "recent", "latest"):
            return None
        return " ".join(_VERBS[verb].format(place=place, rest=rest).split())
    if not slash and place == "calendar" and verb in _DAY_FIRST:
        # (what follows only when: the day's events; a day and a thing: the thing put in)
        things = [w for w in words[1:] if w.casefold() not in _DAY_FIRST and not _CLOCK.fullmatch(w)]
        return f"what's on my calendar {rest}" if not things else f"add {rest} to my calendar"
    if not slash:
        return None  # "grocery shopping on friday": a list's name and words, no command
    if not rest:
        return _NOTHING_AFTER.format(place=place)
    return _BARE.get(place, _BARE_DEFAULT).format(place=place, rest=rest)
