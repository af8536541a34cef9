"""Follow-ups: a message that only makes sense against what was just done or shown.

    "and bread too" / "also butter please"   -> the last call again, with the new items
    "remove the eggs" (eggs were just shown) -> that agent's remover, with the eggs
    "actually make that oat milk"            -> take the last added item back, add this one
    "the second one"                         -> the second thing of the last list, opened
    "do the same for tomorrow"               -> the last call again, for another day

Each reading needs the state to support it (an earlier call with a list parameter, an
entity that was shown, a day parameter); otherwise the message is left to the planner.
Values are read with the planner's own slot readers, so "bread and butter" is two items
and "friday" a date exactly as in a first request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rapidfuzz import fuzz

from dreamer.sidekick.dialogue.state import CallRecord, DialogueState, label
from dreamer.sidekick.dialogue.undo import inverse_step
from dreamer.sidekick.planner.base import Step, Tool
from dreamer.sidekick.planner.dialog import read_answer
from dreamer.sidekick.planner.language.lexicon import ORDINALS
from dreamer.sidekick.planner.language.slots import SlotType, slot_type

MAX_FOLLOWUP_CHARS = 300  # tests/security/test_regex_backtracking.py fuzzes these patterns at this length
_TAIL = r"(?:\s+(?:too|as well|also|again|please|then|now|thanks))*+\s*[.!?]*"
ADD_MORE = [
    re.compile(rf"^(?:oh,?\s+)?(?:and|also|plus|oh and)\s+(?:add\s+|get\s+|some\s+)?(?P<x>.+?){_TAIL}$", re.I),
    re.compile(rf"^(?P<x>.+?)\s+(?:too|as well){_TAIL}$", re.I),
]
SAME = [
    re.compile(r"^(?:and\s+|now\s+|ok,?\s+|okay,?\s+|then\s+)?(?:please\s+)?(?:do\s+)?(?:the\s+)?same(?:\s+thing)?\s+"
               r"(?:for|on)\s+(?P<x>.+?)\s*(?:too|please)?\s*[.!?]*$", re.I),
    re.compile(r"^(?:and\s+|ok,?\s+)?(?:what|how)\s+about\s+(?P<x>.+?)\s*\??$", re.I),
    re.compile(r"^and\s+(?:for|on)\s+(?P<x>.+?)(?:\s+too)?\s*[.!?]*$", re.I),
    re.compile(r"^(?:now\s+|then\s+)?(?:do\s+)?(?:it|that)\s+(?:again\s+)?(?:for|on)\s+(?P<x>.+?)(?:\s+too)?\s*[.!?]*$", re.I),
]
REMOVE = re.compile(
    r"^(?:please\s+|oh,?\s+|and\s+|also\s+|actually,?\s+)*+(?:remove|delete|drop|scratch|cross off|cross out|get rid of|"
    r"take off|take out|lose)\s+(?:the\s+|that\s+|those\s+)?(?P<x>.+?)(?:\s+(?:off|out|from (?:it|that|there|the list)))?"
    r"(?:\s+(?:again|too|please|now))*+\s*[.!]*$|"
    r"^(?:please\s+)?take\s+(?:the\s+)?(?P<y>.+?)\s+(?:off|out)(?:\s+(?:again|too|please|now|of it))*+\s*[.!]*$",
    re.I,
)
REPLACE = [
    re.compile(r"^(?:(?:actually|no|sorry|oh|wait|oops|hmm)\W+)*+(?:please\s+)?(?:make\s+(?:that|it|this)|change\s+(?:that|it)\s+to|"
               r"switch\s+(?:that|it)\s+to|replace\s+(?:that|it)\s+with|i\s+meant|i\s+mean|not\s+that,)\s+(?P<x>.+?)"
               r"(?:\s+instead)?(?:\s+please)?\s*[.!]*$", re.I),
    re.compile(r"^(?:(?:actually|no|sorry)\W+)*+(?P<x>.+?)\s+instead(?:\s+please)?\s*[.!]*$", re.I),
]
PICK = re.compile(
    r"^(?:(?:ok|okay|then|and)\W+)?(?:(?:show|open|give|get|tell)\s+me\s+|i(?:'ll| will)?\s+(?:take|want|go with)\s+|"
    r"let's\s+(?:go with|do)\s+|(?:go with|pick|choose)\s+)?(?:the\s+)?(?:number\s+|option\s+|no\.?\s*)?"
    r"(?P<n>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|\d{1,2}(?:st|nd|rd|th)?)"
    r"(?:\s+(?:one|recipe|note|item|event|idea))?(?:\s+please)?\s*[.!]*$",
    re.I,
)
_REMOVER_WORDS = ("remove", "delete", "take", "cross", "clear")


@dataclass(frozen=True)
class FollowUp:
    steps: tuple[Step, ...]
    kind: str  # "more" | "same" | "remove" | "replace" | "pick"
    reply: str | None = None  # said instead of running anything (a pick with nothing to open)


def follow_up(text: str, state: DialogueState, tools: Sequence[Tool], now: datetime) -> FollowUp | None:
    """The follow-up `text` makes against `state`, or None when it is no follow-up of it."""
    said = " ".join(text.replace("’", "'").split())
    if len(said) > MAX_FOLLOWUP_CHARS:  # follow-ups are short; no pattern below sees a long message
        return None
    if not said or not state.calls and state.shown is None:
        return None
    by_name = {t.name: t for t in tools}
    for reader in (_pick, _same, _replace, _remove, _more):
        found = reader(said, state, by_name, now)
        if found is not None:
            return found
    return None


def _last(state: DialogueState, by_name: Mapping[str, Tool]) -> tuple[CallRecord, Tool] | None:
    for record in reversed(state.calls):
        if record.is_undo:
            continue
        tool = by_name.get(record.name)
        return (record, tool) if tool is not None else None
    return None


def _slot(tool: Tool, name: str) -> SlotType:
    schema = tool.properties.get(name, {})
    return slot_type(name, schema if isinstance(schema, Mapping) else {}, name in tool.required)


def _more(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    last = _last(state, by_name)
    if last is None:
        return None
    record, tool = last
    for pattern in ADD_MORE:
        m = pattern.match(said)
        if m is None:
            continue
        x = m.group("x").strip()
        param = _fillable(tool)
        if param is None or not x:
            return None
        value = read_answer(_slot(tool, param), x, now)
        if value in (None, [], ""):
            return None
        return FollowUp((Step(record.agent, record.function, {**record.args, param: value}),), "more")
    return None


def _fillable(tool: Tool) -> str | None:
    """The parameter "and X too" gives a new value: a list one, else the only required text one."""
    lists = [n for n in tool.properties if _slot(tool, n).kind == "list"]
    if lists:
        return lists[0]
    texts = [n for n in tool.required if _slot(tool, n).kind == "text"]
    return texts[0] if len(texts) == 1 else None


def _same(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    last = _last(state, by_name)
    if last is None:
        return None
    record, tool = last
    for pattern in SAME:
        m = pattern.match(said)
        if m is None:
            continue
        x = m.group("x").strip()
        for param in tool.properties:
            kind = _slot(tool, param).kind
            if kind not in ("day", "moment"):
                continue
            value = read_answer(SlotType("day", required=True), x, now)
            if value is None:
                return None
            old = record.args.get(param)
            if kind == "moment" and isinstance(old, str) and "T" in old and "T" not in str(value):
                day = read_answer(SlotType("moment", required=True), x, now)
                value = f"{str(day)[:10]}{old[10:]}" if isinstance(day, str) and len(day) >= 10 else value
            return FollowUp((Step(record.agent, record.function, {**record.args, param: value}),), "same")
        return None
    return None


def _replace(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    last = _last(state, by_name)
    if last is None:
        return None
    record, tool = last
    for pattern in REPLACE:
        m = pattern.match(said)
        if m is None:
            continue
        x = m.group("x").strip()
        param = _fillable(tool)
        if param is None or record.undone:
            return None
        old = record.args.get(param)
        value = read_answer(_slot(tool, param), x, now)
        if value in (None, [], ""):
            return None
        steps: list[Step] = []
        inverse = inverse_step(record)
        if isinstance(old, list) and old:
            gone = old[-1]
            if inverse is not None:
                kept = {k: ([v for v in val if _same_item(v, gone)] if isinstance(val, list) else val)
                        for k, val in inverse.args.items()}
                if any(isinstance(v, list) and v for v in kept.values()):
                    steps.append(Step(inverse.agent, inverse.function, kept))
            new = value if isinstance(value, list) else [value]
            steps.append(Step(record.agent, record.function, {**record.args, param: new}))
        else:
            if inverse is not None:
                steps.append(inverse)
            steps.append(Step(record.agent, record.function, {**record.args, param: value}))
        return FollowUp(tuple(steps), "replace")
    return None


def _remove(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    m = REMOVE.match(said)
    if m is None:
        return None
    x = (m.group("x") or m.group("y") or "").strip()
    if not x or x.lower() in ("it", "that", "them", "those", "this"):
        return None
    known = _known_entities(state)
    wanted = read_answer(SlotType("list", required=True), x, now) or [x]
    picked: list[tuple[str, str]] = []  # (agent, entity)
    for want in wanted:
        match = next(((agent, label(e)) for agent, e in known if _same_item(label(e), str(want))), None)
        if match is None:
            return None  # something not just shown: a request of its own, for the planner
        picked.append(match)
    agents = {a for a, _ in picked}
    if len(agents) != 1:
        return None
    agent = agents.pop()
    remover = _remover(agent, by_name)
    if remover is None:
        return None
    param = _fillable(remover)
    if param is None:
        return None
    return FollowUp((Step(agent, remover.function, {param: [e for _, e in picked]}),), "remove")


def _known_entities(state: DialogueState) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if state.shown is not None:
        out += [(state.shown.agent, e) for e in state.shown.entities]
    for record in reversed(state.calls):
        for value in record.args.values():
            if isinstance(value, list):
                out += [(record.agent, v) for v in value if isinstance(v, str)]
    return out


def _remover(agent: str, by_name: Mapping[str, Tool]) -> Tool | None:
    """The agent's function that takes things off: one that reverses an adding function, named like removing."""
    tools = [t for t in by_name.values() if t.agent == agent]
    targets = {t.undo["function"] for t in tools if isinstance(t.undo, Mapping) and isinstance(t.undo.get("function"), str)}
    found = [t for t in tools if t.function in targets and any(_slot(t, n).kind == "list" for n in t.properties)]
    found.sort(key=lambda t: not any(w in f"{t.function} {t.summary}".lower() for w in _REMOVER_WORDS))
    return found[0] if found else None


def _pick(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    m = PICK.match(said)
    if m is None or state.shown is None or not state.shown.entities:
        return None
    word = m.group("n").lower()
    entities = state.shown.entities
    if word == "last":
        n = len(entities)
    elif word in ORDINALS:
        n = ORDINALS[word]
    else:
        n = int(re.sub(r"\D", "", word) or 0)
    if not 1 <= n <= len(entities):
        return FollowUp((), "pick", f"The last list had {len(entities)} entries; say a number from 1 to {len(entities)}.")
    entity = entities[n - 1]
    opener = _opener(state.shown.agent, entity, by_name)
    if opener is None:
        return FollowUp((), "pick", f"Number {n} is {label(entity)}.")
    tool, param, value = opener
    return FollowUp((Step(tool.agent, tool.function, {param: value}),), "pick")


def _opener(agent: str, entity: Any, by_name: Mapping[str, Tool]) -> tuple[Tool, str, Any] | None:
    """A read-only function of the agent that takes this entity as its one required value ("get_recipe(name)")."""
    if not isinstance(entity, Mapping):
        return None
    for tool in by_name.values():
        if tool.agent != agent or tool.undo is not False or len(tool.required) != 1:
            continue
        param = tool.required[0]
        if param in entity:
            return tool, param, entity[param]
    return None


def _same_item(a: Any, b: Any) -> bool:
    x, y = str(a).casefold().strip(), str(b).casefold().strip()
    if x == y or x.rstrip("s") == y.rstrip("s"):
        return True
    return len(x) > 3 and len(y) > 3 and fuzz.ratio(x, y) >= 88
