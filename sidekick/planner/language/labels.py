"""Entries written as "label: value", the way list apps and other assistants take them.

"shopping list: baking soda", "calendar: dinner with Maria on thursday at 6pm",
"todo: call the bank", "shopping list - bagels", "one more item for the list: ghee". The
label names where the value goes; the request is to add it there. Read as "add <value> to
my <label>" when the message as written fits nothing.

A hashtag naming a list does the same, wherever it stands ("#groceries hummus", "buy greek
yogurt #shopping"): list apps and chat groups use it so. Only list names count; any other
hashtag is a note's tag (leftovers.labels_from_text).
"""

from __future__ import annotations

import re

from dreamer.sidekick.planner.language.lexicon import QUESTION_WORDS

# The colon is followed by a space or the end of a word that is no web address: "pocket https://..." has no label.
_LABELLED = re.compile(r"^\s*([A-Za-z][A-Za-z' -]{0,40}?)\s*(?::(?!//)|\s[-–—]\s)\s*(\S.*)$")
MAX_LABEL_WORDS = 3
# A place, then "+" or "+=" and what goes on it, as a programmer or a terse user writes it.
_PLUS = re.compile(r"^\s*([A-Za-z][A-Za-z'-]{0,20}(?: [A-Za-z][A-Za-z'-]{0,20})?) ?\+=? ?(\S.{0,200})$")
# A longer label still names a place when it ends with one: "one more item for the list".
_PLACE_WORDS = frozenset({"list", "calendar", "diary", "notes", "todo", "todos", "to-do", "groceries", "shopping"})
MAX_PLACE_LABEL_WORDS = 7
# What the things are for, as the label: "for the messages", "for the big shop", "for Tesco" is no place.
_FOR_THE_SHOP = re.compile(r"^(?:for |from )?(?:the )?(?:messages|shopping|shops|big shop|weekly shop|supermarket"
                           r"|grocery run|store)$", re.IGNORECASE)
# Hashtags that name a list, and the list they name.
_LIST_TAGS = {
    "groceries": "grocery list", "grocery": "grocery list", "shopping": "shopping list",
    "shoppinglist": "shopping list", "grocerylist": "grocery list", "todo": "to-do list",
    "todos": "to-do list", "todolist": "to-do list", "tasks": "to-do list",
}
# Labels that are a verb, and the request they make: "save: Liam's shoe size is 13" is a note,
# "buy: candles" goes on the shopping list.
_NOTE = "save a note: {value}"
_VERB_LABELS = {"save": _NOTE, "remember": _NOTE, "jot": _NOTE, "jot down": _NOTE, "memo": _NOTE,
                "write down": _NOTE, "buy": "add {value} to my shopping list",
                "get": "add {value} to my shopping list", "pick up": "add {value} to my shopping list"}
_TAG = re.compile(r"(?<![\w#])#([A-Za-z-]{2,20})(?![\w-])")


# The place said before what goes on it: "Add to list kefir please", "put on the shopping list: eggs, milk".
_PLACE_FIRST = re.compile(r"^\s*(?:add|put|pop|stick|throw|chuck|write)(?: (?:in|on|onto|to|into))? (?:the |my |our )?"
                          r"((?:[A-Za-z-]+ )?(?:list|to-do list|todo list|to-dos|todos|groceries)):? ([^\s:].{0,200})$",
                          re.IGNORECASE)


# The place as the subject of a need: "grocery list need rice paper please", "shopping list needs eggs".
_PLACE_NEEDS = re.compile(r"^\s*(?:the |my |our )?((?:[A-Za-z-]+ )?(?:list|to-do list|todo list)) (?:need|needs|want|wants|gets)"
                          r" ([^\s:].{0,200})$", re.IGNORECASE)


def labelled_entry(text: str) -> str | None:
    """The request a "label: value" message stands for, or None when it is not one."""
    needs = _PLACE_NEEDS.match(text)
    if needs is not None and needs.group(2).split()[0].casefold() not in ("to", "and", "a", "more"):
        return f"add {needs.group(2).strip()} to my {needs.group(1).strip()}"
    first = _PLACE_FIRST.match(text)
    if first is not None and first.group(2).split()[0].casefold() not in ("and", "too", "please", "pls", "now"):
        return f"add {first.group(2).strip()} to my {first.group(1).strip()}"
    plus = _PLUS.match(text)
    if plus is not None and plus.group(1).split()[-1].casefold() in _PLACE_WORDS | {"grocery", "todo", "to-do"}:
        return f"add {plus.group(2).strip()} to my {plus.group(1).strip()}"  # "groceries + feta", "shopping list += bread"
    m = _LABELLED.match(text)
    if m is None:
        return None
    label, value = m.group(1).strip(), m.group(2).strip()
    if _FOR_THE_SHOP.match(label):
        label = "shopping list"  # "for the messages: tomatoes, feta" (Scots' messages are the shopping)
    words = label.split()
    if ":" not in text[: m.start(2)] and words[-1].casefold() not in _PLACE_WORDS:
        return None  # "dentist - tuesday 3pm" is a title and a time; only "shopping list - bagels" names a place
    if len(words) > MAX_LABEL_WORDS:
        if len(words) > MAX_PLACE_LABEL_WORDS or words[-1].casefold() not in _PLACE_WORDS:
            return None
        label = words[-1]
    if value.split()[0].casefold().split("'")[0] in QUESTION_WORDS:
        return None
    return f"add {value} to my {label}"


def verb_labelled(text: str) -> str | None:
    """The request a "verb: value" message makes ("save: the gate code is 4471"), or None."""
    m = _LABELLED.match(text)
    if m is None or ":" not in text[: m.start(2)]:
        return None
    verb = _VERB_LABELS.get(" ".join(m.group(1).casefold().split()))
    return verb.format(value=m.group(2).strip()) if verb is not None else None


def list_tag_entry(text: str) -> str | None:
    """ "#groceries hummus" -> "add hummus to my grocery list": the one list hashtag taken out of the message."""
    tags = [m for m in _TAG.finditer(text) if m.group(1).casefold().replace("-", "") in _LIST_TAGS]
    if len(tags) != 1:
        return None
    m = tags[0]
    rest = " ".join((text[: m.start()] + " " + text[m.end():]).split()).strip(" ,;:-")
    if not rest or rest.split()[0].casefold().split("'")[0] in QUESTION_WORDS:
        return None
    return f"add {rest} to my {_LIST_TAGS[m.group(1).casefold().replace('-', '')]}"


# A message that is only things to get and a word of asking: "milk pls", "eggs and bacon pls", "bin bags!!".
# Said to a personal assistant with nothing else, such things are the shopping list's.
_ASKING_TAIL = frozenset({"pls", "plz", "please", "asap"})  # (not "thanks": "legend, thanks" thanks, and asks nothing)
MAX_BARE_THINGS = 4
MAX_THING_WORDS = 3


def bare_things(text: str, not_things: frozenset[str]) -> str | None:
    """ "add <things> to my shopping list" for a message of things and "pls" (or "!!"); None otherwise.
    `not_things`: words that make a part something else than a thing (verbs, question words, pronouns)."""
    words = text.replace(",", " , ").split()
    asked = text.rstrip().endswith("!!")
    while words and (words[-1].strip("!.").casefold() in _ASKING_TAIL or not words[-1].strip("!.,")):
        asked = asked or words[-1].strip("!.,").casefold() in _ASKING_TAIL
        words.pop()
    if not asked or not words:
        return None
    parts: list[list[str]] = [[]]
    for word in words:
        bare = word.strip("!.").casefold()
        if bare in (",", "and", "&"):
            parts.append([])
        else:
            parts[-1].append(word.strip("!."))
    parts = [p for p in parts if p]
    if not parts or len(parts) > MAX_BARE_THINGS or any(len(p) > MAX_THING_WORDS for p in parts):
        return None
    if any(not w.replace("-", "").replace("'", "").isalpha() or w.casefold() in not_things
           or w.casefold().removesuffix("s") in not_things for p in parts for w in p):
        return None
    return f"add {', '.join(' '.join(p) for p in parts)} to my shopping list"
