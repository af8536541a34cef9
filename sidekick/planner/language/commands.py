"""Commands typed the way chat apps and command lines take them: "/notes search visa", "grocery ls".

People who live in Slack, Discord or a terminal write a list's name, then a short verb and its
argument. Read as the sentence it abbreviates ("search my notes for visa", "show my grocery
list"), every function's own patterns apply. Only a known place opens such a command, and only
a known short verb follows it (or none, after a slash): "grocery shopping on friday" is no command.
"""

from __future__ import annotations

# The places a command may name, and how a sentence names them.
_PLACES = {
    "notes": "notes", "note": "notes", "todo": "to-do list", "todos": "to-do list", "tasks": "to-do list",
    "task": "to-do list", "cal": "calendar", "calendar": "calendar", "agenda": "calendar",
    "grocery": "grocery list", "groceries": "grocery list", "shopping": "shopping list", "list": "list",
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


def as_sentence(text: str) -> str | None:
    """The sentence a command-style message abbreviates, or None when `text` is no such command."""
    words = text.split()
    if not words or len(words) > MAX_WORDS:
        return None
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
    if not slash:
        return None  # "grocery shopping on friday": a list's name and words, no command
    if not rest:
        return _NOTHING_AFTER.format(place=place)
    return _BARE.get(place, _BARE_DEFAULT).format(place=place, rest=rest)
