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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rapidfuzz import fuzz

from dreamer.sidekick.dialogue.state import CallRecord, DialogueState, label
from dreamer.sidekick.dialogue.undo import inverse_step
from dreamer.sidekick.planner.base import Plan, Step, Tool
from dreamer.sidekick.planner.dialog import read_answer
from dreamer.sidekick.planner.language.dates import TEMPORAL, WEEKDAYS, parse_moment
from dreamer.sidekick.planner.language.lexicon import ORDINALS
from dreamer.sidekick.planner.language.slots import SlotType, slot_type
from dreamer.sidekick.planner.language.text import prepare, tokenize

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
# Value kinds a correction's words are tried as before free text: "actually make it 11am"
# after adding an event changes its time, not its title.
_TYPED = ("moment", "day", "int", "number", "url")

# text -> the planner's Plan for it as a request of its own (None: no planner to ask)
Replan = Callable[[str], Plan]


@dataclass(frozen=True)
class FollowUp:
    steps: tuple[Step, ...]
    kind: str  # "more" | "same" | "remove" | "replace" | "pick"
    reply: str | None = None  # said instead of running anything (a pick with nothing to open)


def follow_up(text: str, state: DialogueState, tools: Sequence[Tool], now: datetime,
              replan: Replan | None = None) -> FollowUp | None:
    """The follow-up `text` makes against `state`, or None when it is no follow-up of it."""
    said = " ".join(text.replace("’", "'").split())
    if len(said) > MAX_FOLLOWUP_CHARS:  # follow-ups are short; no pattern below sees a long message
        return None
    if not said or not state.calls and state.shown is None:
        return None
    by_name = {t.name: t for t in tools}
    for reader in (_pick, _same, _reask, _replace, _remove):
        found = reader(said, state, by_name, now)
        if found is not None:
            return found
    return _more(said, state, by_name, now, replan)


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


def _more(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime,
          replan: Replan | None = None) -> FollowUp | None:
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
        if param is None or not x or _whole(tool, param):
            return None  # a fragment is no whole question: _reask rewrites the question, or the planner reads it
        # "and don't forget croutons": what follows "and" may be a request of its own. Asked
        # as one, it names this same function (its value read by the planner, without the
        # command words), another function (the planner takes the whole message), or nothing
        # (then it is the value itself: "and bread too").
        planned = replan(x) if replan is not None else None
        if planned is not None and planned.steps and planned.pending is None and not planned.unmatched:
            if len(planned.steps) == 1 and planned.steps[0].name == record.name and param in planned.steps[0].args:
                return FollowUp((Step(record.agent, record.function,
                                      {**record.args, param: planned.steps[0].args[param]}),), "more")
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
    bare = _bare_day(said)
    for pattern in SAME:
        m = pattern.match(said)
        if m is None and bare is None:
            continue
        x = m.group("x").strip() if m is not None else str(bare)
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


REASK = re.compile(r"^(?:(?:and|ok|okay|so|now)\W+)?(?:(?:what|how)\s+about\s+|and\s+)(?P<x>[^?!.]{1,80}?)(?:\s+(?:too|then))?\s*[?!.]*$",
                   re.IGNORECASE)
_PREPOSITIONS = frozenset("in for at from of during on by within".split())
# Words that end a preposition's object in a question: "in sales [took] sick leave".
_OBJECT_ENDS = _PREPOSITIONS | frozenset("took take were was is are have has had did do does who which that last this next "
                                         "and or with than".split())


def _reask(said: str, state: DialogueState, by_name: Mapping[str, Tool], now: datetime) -> FollowUp | None:
    """ "And in finance?" after a question put whole to a function (sql-explorer's ask): the same question,
    with the part the fragment replaces swapped. A day or month replaces the question's day or month; anything
    else replaces the other object of a preposition ("in sales" -> "in finance")."""
    last = _last(state, by_name)
    m = REASK.match(said)
    if last is None or m is None:
        return None
    record, tool = last
    whole = [n for n in tool.properties if _whole(tool, n)]
    if len(whole) != 1 or not isinstance(record.args.get(whole[0]), str):
        return None
    asked = _swapped(record.args[whole[0]], m.group("x"))
    if asked is None:
        return None
    return FollowUp((Step(record.agent, record.function, {**record.args, whole[0]: asked}),), "same")


def _whole(tool: Tool, name: str) -> bool:
    schema = tool.properties.get(name)
    return isinstance(schema, Mapping) and schema.get("x-whole-request") is True


def _swapped(question: str, fragment: str) -> str | None:
    """`question` with the preposition phrase `fragment` stands for replaced, or None when none fits."""
    new = fragment.split()
    if not new:
        return None
    prep = new[0].casefold() if new[0].casefold() in _PREPOSITIONS else None
    value = new[1:] if prep else new
    if not value:
        return None
    timed = any(w.casefold().strip(",") in TEMPORAL or w.casefold() in WEEKDAYS for w in value)
    words = question.rstrip(" ?!.").split()
    spans: list[tuple[int, int, bool]] = []  # (start, end) of each preposition's object, and whether it names a time
    for i, w in enumerate(words):
        if w.casefold() not in _PREPOSITIONS or (prep and w.casefold() != prep and not timed):
            continue
        j = i + 1
        while j < len(words) and words[j].casefold() not in _OBJECT_ENDS:
            j += 1
        if j > i + 1:
            spans.append((i + 1, j, any(x.casefold().strip(",") in TEMPORAL for x in words[i + 1 : j])))
    fitting = [sp for sp in spans if sp[2] == timed]
    if not fitting:
        return None
    a, b, _ = fitting[-1] if timed else fitting[0]
    tail = question.rstrip()[len(question.rstrip(" ?!.").rstrip()):]
    return " ".join([*words[:a], *value, *words[b:]]) + tail


_WRAPPER_LEAD = frozenset("and now then ok okay so what how about do it that the same thing for on also again please".split())
_WRAPPER_TAIL = frozenset("too also again please then instead as well".split())


def _bare_day(said: str) -> str | None:
    """The day a message names and nothing else, inside "and", "what about", "now do ... too": "and saturday?"."""
    words = [w.low for w in tokenize(prepare(said)) if w.kind != "punct"]
    while words and words[0] in _WRAPPER_LEAD:
        words = words[1:]
    while words and words[-1] in _WRAPPER_TAIL:
        words = words[:-1]
    if not words or not any(w in TEMPORAL or w in WEEKDAYS for w in words):
        return None  # "and bread" names no day; only a day word makes this a day
    return " ".join(words) if parse_moment(words, datetime.now()) is not None else None


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
        if record.undone:
            return None
        typed = _typed_value(tool, record, x, now)
        param = typed[0] if typed else _fillable(tool)
        if param is None:
            return None
        old = record.args.get(param)
        value = typed[1] if typed else read_answer(_slot(tool, param), x, now)
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


def _typed_value(tool: Tool, record: CallRecord, x: str, now: datetime) -> tuple[str, Any] | None:
    """The parameter of the last call whose kind `x` reads as wholly (a time, a day, a number), and its value.

    A bare time for a date-and-time parameter keeps the date already given: "make it 11am"
    moves Friday's 10:00 to Friday's 11:00, not to today.
    """
    for param in tool.properties:
        kind = _slot(tool, param).kind
        if kind not in _TYPED or param not in record.args:
            continue
        value = read_answer(_slot(tool, param), x, now)
        if value in (None, "", []):
            continue
        old = record.args.get(param)
        if kind == "moment" and isinstance(value, str) and isinstance(old, str) and len(old) >= 10 and "T" in value:
            said = parse_moment([w.low for w in tokenize(prepare(x))], now)
            if said is not None and said.day is None:  # a time only: on the day already given
                value = old[:10] + value[10:]
        return param, value
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
        if tool.agent != agent or not (tool.reads or tool.undo is False) or len(tool.required) != 1:
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
