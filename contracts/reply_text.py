"""A call's result as a sentence or a short list for the user, never a dump of its fields.

In order: the result's own "reply" (or "answer") string; the function's reply templates
(dreamer.sdk.replies) that have every field they name; a "summary"/"message" string; and
last a plain sentence naming what was done. Errors are one sentence saying what to do:
exception names and tracebacks an agent let through are cut out.

Here in contracts because two sides read results the same way: Sidekick's answers and the
web's activity rows ("Grocery added milk to your grocery list").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from dreamer.sdk.replies import FIELD_RE, MISSING, is_empty, lookup, template_fields

OWN_KEYS = ("reply", "answer")  # a result's own words for the user
TEXT_KEYS = ("summary", "message")
ITEM_KEYS = ("text", "title", "name", "summary", "label", "value", "url")
MAX_INLINE = 12  # list items written in a sentence; more are counted
MAX_LINES = 15  # list items written one per line
MAX_TEXT = 1500  # characters of one field's text
MAX_REPLY = 4000

_EXCEPTION = re.compile(r"\b(?:[A-Z][A-Za-z]*(?:Error|Exception)|Traceback|SystemExit|KeyboardInterrupt)\b:?\s*")
# A description's first sentence ends its action at the first clause mark: "Delete one event
# from the user's calendar, by its id or ..." is "delete one event from your calendar".
_CLAUSE_MARK = re.compile(r"\s*(?:\(|,\s|;\s|:\s|\s[-–—]\s)")
_LONG_JOIN = re.compile(r"\s(?:and|or|when|so|because|unless|if|in the order|with|by|within)\s")
MAX_ACTION = 60
# A summary that opens with one of these names a thing, not an action ("The most recently saved notes").
_NOT_A_VERB = frozenset("the a an your one all every each some any this these its their what which who how why "
                        "when where whether".split())
_TRACE_LINE = re.compile(r"^\s*(?:File \"|Traceback|\^+$|During handling)", re.MULTILINE)
# sdk/worker.py reports an exception an agent let through as "add_items raised ValueError: …":
# the function's name says nothing to a person.
_RAISED = re.compile(r"^[A-Za-z_]\w* raised\s+")


def result_text(result: Any, templates: Sequence[str] = (), summary: str = "") -> str:
    """What one successful call says to the user."""
    said = result_words(result, templates)
    if said is not None:
        return said
    if isinstance(result, list):
        if not result:
            return "There is nothing to show."
        return f"Here is what I found:{_lines(result)}"
    what = action(summary)
    return f"Done: {what}." if what else "Done."


def result_words(result: Any, templates: Sequence[str] = ()) -> str | None:
    """The result's own words: its "reply", its templates filled, its "summary" or "message",
    or a string result; None when only a generic sentence ("Done.") would be left."""
    if isinstance(result, Mapping):
        for key in OWN_KEYS:
            own = result.get(key)
            if isinstance(own, str) and own.strip():
                return _clip(own.strip(), MAX_REPLY)
    # A list result is read by templates as {"items": [...], "count": n}.
    fields = {"items": result, "count": len(result)} if isinstance(result, list) else result
    rendered = [t for t in (render(template, fields) for template in templates) if t]
    if rendered:
        return _clip(_join(rendered), MAX_REPLY)
    if isinstance(result, Mapping):
        for key in TEXT_KEYS:
            text = result.get(key)
            if isinstance(text, str) and text.strip():
                return _clip(text.strip(), MAX_REPLY)
    if isinstance(result, str) and result.strip():
        return _clip(result.strip(), MAX_REPLY)
    return None


def and_list(items: Sequence[str]) -> str:
    """'milk, eggs and bread'; past MAX_INLINE items, '… and 3 more'."""
    return _and(items)


def render(template: str, result: Any) -> str | None:
    """The template filled from the result; None when a field it needs is empty (or one it must not have is set)."""
    try:
        fields = template_fields(template)
    except ValueError:
        return None
    for field in fields:
        empty = is_empty(lookup(result, field.path))
        if empty != field.negated:
            return None

    def fill(match: re.Match[str]) -> str:
        if match.group(1):
            return ""
        value = lookup(result, match.group(2).split("."))
        return _value(value, match.group(3) or "")

    return FIELD_RE.sub(fill, template).strip()


def plain_error(message: Any) -> str:
    """An error's message as a person reads it: the part before any traceback, without the
    worker's "add_items raised ValueError:" or exception names, quotes and runs of spaces
    ('' when nothing is left). web/static/chat.js (`plainError`) cleans live answers alike."""
    message = str(message or "").strip()
    message = _TRACE_LINE.split(message)[0].strip() if _TRACE_LINE.search(message) else message
    message = _RAISED.sub("", message)
    message = _EXCEPTION.sub("", message).strip().strip("'\"").strip()
    return " ".join(message.split())


def error_words(error: Any) -> str:
    """A failed run's or call's error (the {"code", "message"} mapping or a string) as one
    sentence of its own, for the pages: 'The page's address must start with http://.'"""
    message = error.get("message") if isinstance(error, Mapping) else error
    said = plain_error(message)
    if len(said) < 4:
        return "It failed without saying why."
    said = _clip(said, 400)
    return said[:1].upper() + said[1:] + ("" if said[-1] in ".!?…" else ".")


def error_text(summary: str, error: Mapping[str, Any] | None, agent: str = "") -> str:
    """A failed call as one sentence that says what went wrong and, through the agent's words, what to do."""
    message = plain_error((error or {}).get("message"))
    what = action(summary)
    opening = f"I couldn't {what}" if what else (f"The {agent} agent couldn't do that" if agent else "That didn't work")
    if not message or len(message) < 4:
        return f"{opening}; it failed without saying why, so try again or check `dreamer activity`."
    return f"{opening}: {_sentence_body(_clip(message, 400))}."


def addressed(text: str) -> str:
    """A description speaks of "the user"; a reply speaks to them ("your grocery list")."""
    for said, meant in (("the user's", "your"), ("the user", "you"), ("The user's", "Your"), ("The user", "You")):
        text = re.sub(rf"\b{said}\b", meant, text)
    return text


def action(summary: str) -> str | None:
    """What a function does, short enough to name in a sentence ("add items to your grocery list",
    "delete one event from your calendar"); None when its summary names a thing, not an action."""
    text = " ".join(summary.split()).strip()
    if not text or text.split()[0].lower() in _NOT_A_VERB:
        return None
    return _lower_first(brief(text)) or None


def brief(summary: str) -> str:
    """A function's summary cut to its first clause and to a readable length, as written
    ("The most recently saved notes and articles", "Delete one event from your calendar")."""
    text = addressed(" ".join(summary.split())).strip().rstrip(".…")
    text = _CLAUSE_MARK.split(text, maxsplit=1)[0]
    if len(text) > MAX_ACTION:
        joins = [m.start() for m in _LONG_JOIN.finditer(text) if len(text[: m.start()].split()) >= 3]
        text = text[: joins[0]] if joins else text[:MAX_ACTION].rsplit(" ", 1)[0]
    return re.sub(r"\s+(?:and|or|but)$", "", text.strip())


def _value(value: Any, layout: str) -> str:
    if value is MISSING or value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return _clip(value.strip(), MAX_TEXT)
    if isinstance(value, Mapping):
        return _item(value)
    if isinstance(value, list):
        items = [_item(v) for v in value]
        items = [i for i in items if i]
        if layout == "numbered":
            return _lines(items, numbered=True)
        if layout == "lines":
            return _lines(items)
        return _and(items)
    return ""


def _item(value: Any) -> str:
    if isinstance(value, Mapping):
        for key in ITEM_KEYS:
            if isinstance(value.get(key), str) and value[key].strip():
                return _clip(" ".join(value[key].split()), MAX_TEXT)
        return ""
    if isinstance(value, (list, tuple)):
        return _and([_item(v) for v in value])
    return _value(value, "")


def _and(items: Sequence[str]) -> str:
    if not items:
        return ""
    shown = list(items[:MAX_INLINE])
    more = len(items) - len(shown)
    if more:
        return ", ".join(shown) + f" and {more} more"
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _lines(items: Sequence[Any], numbered: bool = False) -> str:
    shown = [i if isinstance(i, str) else _item(i) for i in items[:MAX_LINES]]
    out = "".join(f"\n{n}. {t}" if numbered else f"\n- {t}" for n, t in enumerate(shown, 1) if t)
    if len(items) > MAX_LINES:
        out += f"\n… and {len(items) - MAX_LINES} more"
    return out


def _join(parts: Sequence[str]) -> str:
    out = ""
    for part in parts:
        # Sentences run on; a part with a list of lines (or after one) starts a line of its own.
        out += part if not out else ("\n" if "\n" in out or "\n" in part else " ") + part
    return out


def _clip(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def _lower_first(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _sentence_body(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].lower() + text[1:] if text[:1].isupper() and text[1:2].islower() else text
