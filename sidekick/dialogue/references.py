"""Pronouns and "the ingredients" resolved over what the conversation just did or showed.

"move it to 5pm" after adding an event: the planner reads move_event(start=17:00) and no
event; "it" is the event the last call of that agent made, so its id and title fill the
call. "put those on my grocery list" after a recipe: the planner reads add_items with no
items, or with the word "ingredients" as an item; "those" are the recipe's ingredients,
the latest list of things a result held.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from dreamer.sidekick.dialogue.state import CallRecord, DialogueState, label
from dreamer.sidekick.planner.base import Plan, Step, Tool
from dreamer.sidekick.planner.language.slots import slot_type
from dreamer.sidekick.planner.language.text import prepare, tokenize

PRONOUNS = frozenset("it that this them those these".split())
# Words that make up an item value that only points back ("the ingredients", "everything I need").
POINTING = frozenset("it that this them those these the all everything ingredients ingredient stuff things thing "
                     "of i we need for what is in items item everything's one".split())
# Result keys that hold the things a result lists, most specific first.
LIST_KEYS = ("ingredients", "items", "added", "removed")
IDENTIFYING = ("title", "name")


def _words(text: str) -> list[str]:
    return [w.low for w in tokenize(prepare(text)) if w.kind == "word"]


# Words around a pronoun that a planner may have taken into a name: "make that", "that one".
_AROUND_POINTER = frozenset("make cook prepare do one the recipe dish would could should can i we you to how".split())


def _only_pointing(value: Any) -> bool:
    """A text value that is a pronoun and words around it only ("make that", "that one")."""
    words = set(_words(value)) if isinstance(value, str) else set()
    return bool(words & PRONOUNS) and words <= PRONOUNS | _AROUND_POINTER


def _pointing_value(value: Any) -> bool:
    if value in (None, "", []):
        return True
    values = value if isinstance(value, list) else [value]
    return all(isinstance(v, str) and _words(v) and set(_words(v)) <= POINTING for v in values)


def _latest_list(state: DialogueState) -> list[str] | None:
    for record in reversed(state.calls):
        if record.is_undo or not isinstance(record.result, Mapping):
            continue
        for key in LIST_KEYS:
            found = record.result.get(key)
            if isinstance(found, list) and found and all(isinstance(x, str) for x in found):
                return list(found)
        break  # only the latest call's result is what "those" points at
    if state.shown is not None and state.shown.entities:
        return [label(e) for e in state.shown.entities]
    return None


_ORDINAL_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6}
_AROUND_ORDINAL = POINTING | {"number", "no", "recipe", "idea", "option", "one", "choice", "pick", "ideas", "options"}


def _nth_list(state: DialogueState, value: Any) -> list[str] | None:
    """The list an entry of the list just shown holds, when `value` points at that entry by its place
    ("the ingredients for the second one", "what I need for number 2")."""
    shown = state.shown
    if shown is None or not shown.entities:
        return None
    values = value if isinstance(value, list) else [value]
    if len(values) != 1 or not isinstance(values[0], str):
        return None
    words = [w.low for w in tokenize(prepare(values[0])) if w.kind in ("word", "num", "ord")]
    places = [w for w in words if w in _ORDINAL_WORDS or w == "last" or w.isdigit()]
    if len(places) != 1 or not set(words) - set(places) <= _AROUND_ORDINAL:
        return None
    place = places[0]
    n = len(shown.entities) if place == "last" else _ORDINAL_WORDS.get(place) or int(place)
    if not 1 <= n <= len(shown.entities) or not isinstance(shown.entities[n - 1], Mapping):
        return None
    # The shown entry is kept small (its name); its lists are in the result of the call that showed it.
    name = label(shown.entities[n - 1])
    record = next((r for r in reversed(state.calls) if r.name == f"{shown.agent}.{shown.function}"), None)
    result = record.result if record is not None and isinstance(record.result, Mapping) else {}
    for listed in result.values():
        for entry in listed if isinstance(listed, list) else ():
            if not isinstance(entry, Mapping) or label(entry) != name:
                continue
            for key in LIST_KEYS:
                found = entry.get(key)
                if isinstance(found, list) and found and all(isinstance(x, str) for x in found):
                    return list(found)
    return None


def _flat(record: CallRecord) -> dict[str, Any]:
    """The last call's values by name: its arguments, its result's fields, a nested object's fields,
    and that object's id as "<object>_id" (result.event.id is event_id)."""
    out: dict[str, Any] = dict(record.args)
    result = record.result if isinstance(record.result, Mapping) else {}
    for key, value in result.items():
        if isinstance(value, Mapping):
            for k, v in value.items():
                if isinstance(v, (str, int)):
                    out.setdefault(k, v)
                    if k == "id":
                        out[f"{key}_id"] = v
        elif isinstance(value, (str, int)):
            out.setdefault(key, value)
    return out


def _last_of(state: DialogueState, agent: str) -> CallRecord | None:
    for record in reversed(state.calls):
        if not record.is_undo and not record.undone and record.agent == agent:
            return record
    return None


_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_AROUND_ENTRY = _AROUND_ORDINAL | {"s", "'s", "item", "task", "todo", "to-do", "entry", "thing"}


def _nth_entry(state: DialogueState, value: Any) -> str | None:
    """The entry of the list just shown that a text value points at: by its place ("the first one's",
    "number two", "the last one") or by a word of it and "one" ("the gate one", "the christmas cards one")."""
    shown = state.shown
    if shown is None or not shown.entities or not isinstance(value, str) or len(value.split()) > MAX_POINTING_VALUE_WORDS:
        return None
    words = [w.low for w in tokenize(prepare(value)) if w.kind in ("word", "num", "ord")]
    labels = [label(e) for e in shown.entities]
    # ("one" is a place only after "number": "the gate one" names an entry by its words)
    places = [w for i, w in enumerate(words) if w in _ORDINAL_WORDS or w == "last" or w.isdigit()
              or (w in _NUMBER_WORDS and (w != "one" or words[i - 1: i] in (["number"], ["no"])))]
    if len(places) == 1 and set(words) - set(places) <= _AROUND_ENTRY:
        place = places[0]
        n = (len(labels) if place == "last" else _ORDINAL_WORDS.get(place) or _NUMBER_WORDS.get(place)
             or int(place))
        return labels[n - 1] if 1 <= n <= len(labels) else None
    if len(words) >= 2 and words[-1] == "one":
        named = set(words[:-1]) - {"the", "that", "this", "my"}
        fits = [x for x in labels if named and named <= set(_words(x))]
        return fits[0] if len(fits) == 1 else None
    return None


def resolve(steps: Sequence[Step], text: str, state: DialogueState, tools: Sequence[Tool]) -> tuple[Step, ...] | None:
    """The steps with pronouns filled from the conversation; None when nothing was filled."""
    said = set(_words(text))
    by_place = _by_place(steps, state, tools)
    if by_place is not None:
        return by_place  # "the first one's done" after the to-do list: that to-do
    if not said & (PRONOUNS | {"ingredients", "everything", "need"}) or not state.calls and state.shown is None:
        return None
    by_name = {t.name: t for t in tools}
    changed = False
    out = []
    for step in steps:
        tool = by_name.get(step.name)
        args = dict(step.args)
        if tool is not None:
            for name, schema in tool.properties.items():
                kind = slot_type(name, schema if isinstance(schema, Mapping) else {}, name in tool.required).kind
                nth = _nth_list(state, args.get(name)) if kind == "list" else None
                if nth:
                    args[name], changed = nth, True  # "the ingredients for the second one"
                elif kind == "list" and _pointing_value(args.get(name)):
                    found = _latest_list(state)
                    if found:
                        args[name], changed = found, True
            lone = _lone_shown(state, step.agent) if said & PRONOUNS else None
            for name in tool.properties if lone is not None else ():
                if name.endswith("_id") and args.get(name) != lone and str(args.get(name)) not in text.split():
                    # "stop watching it" with one watch just listed: that one ("that one" read as 1 too)
                    args[name], changed = lone, True
            record = _last_of(state, step.agent) if said & PRONOUNS else None
            if record is not None:
                known = _flat(record)
                for name in tool.properties:
                    identifying = name.endswith("_id") or name in IDENTIFYING
                    given = _given(state, step.agent, name, record)
                    if identifying and name in known and (name not in args or _only_pointing(args[name])):
                        # ("how do I make that?" after dinner was planned: the planner read "make that")
                        args[name], changed = known[name], True
                    elif given is not None and _names_it(name, args.get(name), step, given, tool):
                        # "mark it as done" after adding a to-do (and listing them): the planner read
                        # "it as" as the text; "it" is the text the agent's last call was given.
                        args[name], changed = given.args[name], True
        out.append(replace(step, args=args))
    return tuple(out) if changed else None


MAX_POINTING_VALUE_WORDS = 5


def _by_place(steps: Sequence[Step], state: DialogueState, tools: Sequence[Tool]) -> tuple[Step, ...] | None:
    """The steps with a text value that points at an entry of the list just shown replaced by that
    entry, for a function of the agent that showed it; None when no value does."""
    if state.shown is None:
        return None
    by_name = {t.name: t for t in tools}
    changed = False
    out = []
    for step in steps:
        tool = by_name.get(step.name)
        args = dict(step.args)
        if tool is not None and step.agent == state.shown.agent:
            for name, value in step.args.items():
                entry = _nth_entry(state, value) if name in tool.properties else None
                if entry is not None:
                    args[name], changed = entry, True
        out.append(replace(step, args=args))
    return tuple(out) if changed else None


def _lone_shown(state: DialogueState, agent: str) -> Any:
    """The id of the one entry the agent's list just showed, when it showed exactly one."""
    shown = state.shown
    if shown is None or shown.agent != agent or len(shown.entities) != 1:
        return None
    entry = shown.entities[0]
    return entry.get("id") if isinstance(entry, Mapping) and isinstance(entry.get("id"), (int, str)) else None


def _given(state: DialogueState, agent: str, name: str, last: CallRecord) -> CallRecord | None:
    """The agent's latest call given a text value `name`: the last one, or past look-ups that took
    none ("add renew passport to my to-do list", "what's on it?", "mark it as done")."""
    if isinstance(last.args.get(name), str):
        return last
    for record in reversed(state.calls):
        if record.is_undo or record.undone or record.agent != agent:
            continue
        if isinstance(record.args.get(name), str):
            return record
        if name in record.args:
            return None
    return None


def _names_it(name: str, value: Any, step: Step, record: CallRecord, tool: Tool) -> bool:
    """Whether a required text value only points back ("it", "it as", "I did it") at the value of the
    same name the agent's last call was given by another function (a to-do added, then finished)."""
    if name not in tool.required or step.function == record.function or not isinstance(record.args.get(name), str):
        return False
    if value in (None, ""):
        return True
    words = _words(value) if isinstance(value, str) else []
    return bool(words) and len(words) <= MAX_POINTING_VALUE_WORDS and bool(set(words) & PRONOUNS)


def resolve_plan(plan: Plan, text: str, state: DialogueState, tools: Sequence[Tool],
                 settle: Any) -> Plan:
    """`plan` with pronouns resolved; a question that asked only for what the pronoun names is settled."""
    if plan.unmatched:
        return plan
    if plan.steps and plan.pending is None:
        steps = resolve(plan.steps, text, state, tools)
        return replace(plan, steps=steps) if steps is not None else plan
    if plan.pending is not None and plan.pending.kind == "missing":
        steps = resolve(plan.pending.partial.steps, text, state, tools)
        if steps is not None:
            return settle(steps)
    return plan
