"""What a conversation remembers between turns: the calls made, what was shown, what was asked.

Kept with the conversation (the `dialogue` key of the latest assistant message's data,
so it is stored in the same transaction as the turn and needs no table of its own),
and read back at the start of the next turn. Everything is plain JSON, and whatever is
read back is checked: a stored state that cannot be read is an empty one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select

from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ChatMessage
from dreamer.sdk.replies import MISSING, is_empty, resolve_ref
from dreamer.sidekick.planner.base import Step

MAX_CALLS = 8  # calls remembered, newest last
MAX_SHOWN = 30  # entities of the last list shown
MAX_RESULT_CHARS = 4000  # a result bigger than this is remembered by its entities only
SCAN = 6  # assistant messages looked at for the latest state


@dataclass(frozen=True)
class CallRecord:
    """One call Sidekick made: what it asked, what came back, and whether it was undone."""

    agent: str
    function: str
    args: Mapping[str, Any]
    result: Any = None
    undo: Mapping[str, Any] | bool | None = None  # the function's declaration when it ran
    undone: bool = False
    is_undo: bool = False  # this call reversed an earlier one

    @property
    def name(self) -> str:
        return f"{self.agent}.{self.function}"

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "function": self.function, "args": dict(self.args), "result": self.result,
                "undo": dict(self.undo) if isinstance(self.undo, Mapping) else self.undo,
                "undone": self.undone, "is_undo": self.is_undo}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CallRecord:
        undo = data.get("undo")
        return cls(str(data["agent"]), str(data["function"]), dict(data.get("args") or {}), data.get("result"),
                   undo if isinstance(undo, (Mapping, bool)) else None, bool(data.get("undone")),
                   bool(data.get("is_undo")))


@dataclass(frozen=True)
class Shown:
    """The last list the user saw (recipes, notes, list items), to pick from: "the second one"."""

    agent: str
    function: str
    entities: tuple[Any, ...] = ()  # strings, or small objects with name/title/id

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "function": self.function, "entities": list(self.entities)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Shown:
        return cls(str(data["agent"]), str(data["function"]), tuple(data.get("entities") or ())[:MAX_SHOWN])


@dataclass(frozen=True)
class DialogueState:
    calls: tuple[CallRecord, ...] = ()
    shown: Shown | None = None
    # The words of the request an open "which did you mean" question was asked about, so the
    # user's pick can be learned for that phrasing.
    asked_text: str | None = None
    # The latest turn: the user's words, how it went ("missed": nothing fitted, "called": it
    # made calls, "asked": it asked about functions it chose, None: anything else) and the
    # functions it called or asked about, so a correction in the
    # next message ("no, I meant my calendar", "undo that", a rephrasing) can be learned from.
    said: str | None = None
    outcome: str | None = None
    called: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"calls": [c.to_dict() for c in self.calls], "shown": self.shown.to_dict() if self.shown else None,
                "asked_text": self.asked_text, "said": self.said, "outcome": self.outcome, "called": list(self.called)}

    @classmethod
    def from_dict(cls, data: Any) -> DialogueState:
        if not isinstance(data, Mapping):
            return cls()
        try:
            calls = tuple(CallRecord.from_dict(c) for c in data.get("calls") or ())[-MAX_CALLS:]
            shown = Shown.from_dict(data["shown"]) if isinstance(data.get("shown"), Mapping) else None
            asked = data.get("asked_text")
            said, outcome, called = data.get("said"), data.get("outcome"), data.get("called") or ()
            return cls(calls, shown, asked if isinstance(asked, str) else None, said if isinstance(said, str) else None,
                       outcome if outcome in ("missed", "called", "asked") else None,
                       tuple(str(c) for c in called if isinstance(c, str))[:MAX_CALLS])
        except (KeyError, TypeError, ValueError, AttributeError):
            return cls()  # a state an older Sidekick wrote: start afresh

    def last_call(self) -> CallRecord | None:
        return self.calls[-1] if self.calls else None

    def with_calls(self, done: Sequence[Mapping[str, Any]], undo_of: Mapping[str, Any]) -> DialogueState:
        """The state after this turn's calls (`done`: the chat stream's call dicts).

        `undo_of` maps "agent.function" to that function's undo declaration. A call that is the
        inverse of an earlier one marks that one undone, so "undo that" twice goes further back."""
        calls = list(self.calls)
        shown = self.shown
        for call in done:
            if not call.get("ok"):
                continue
            name = f"{call['agent']}.{call['function']}"
            args = dict(call.get("args") or {})
            is_undo = False
            for i in range(len(calls) - 1, -1, -1):
                earlier = calls[i]
                if earlier.undone or earlier.is_undo:
                    continue
                step = inverse_step(earlier)
                if step is not None and step.name == name and dict(step.args) == args:
                    calls[i] = replace(earlier, undone=True)
                    is_undo = True
                break  # only the latest reversible call can be what this one undid
            result = call.get("result")
            calls.append(CallRecord(call["agent"], call["function"], args, _kept(result), undo_of.get(name), False,
                                    is_undo))
            listed = entities(result)
            if listed:
                shown = Shown(call["agent"], call["function"], tuple(listed[:MAX_SHOWN]))
        return replace(self, calls=tuple(calls[-MAX_CALLS:]), shown=shown)


def entities(result: Any) -> list[Any]:
    """The things a result lists, for "the second one" and "remove the eggs"."""
    if isinstance(result, list):
        found = result
    elif isinstance(result, Mapping):
        found = next((v for k, v in result.items()
                      if k in ("items", "recipes", "notes", "todos", "events", "matches", "watches") and isinstance(v, list)), [])
    else:
        return []
    out: list[Any] = []
    for item in found:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping):
            small = {k: item[k] for k in ("id", "name", "title", "text", "url") if isinstance(item.get(k), (str, int))}
            if small:
                out.append(small)
    return out


def label(entity: Any) -> str:
    if isinstance(entity, Mapping):
        for key in ("name", "title", "text", "url"):
            if isinstance(entity.get(key), str):
                return entity[key]
        return str(entity.get("id", ""))
    return str(entity)


def _kept(result: Any) -> Any:
    import json

    try:
        return result if len(json.dumps(result, default=str)) <= MAX_RESULT_CHARS else {"entities": entities(result)}
    except (TypeError, ValueError):
        return None


def load_state(store: Store, conversation_id: str) -> DialogueState:
    """The state the latest turn of this conversation left."""
    with store.session() as s:
        rows = s.scalars(
            select(ChatMessage.data).where(ChatMessage.conversation_id == conversation_id, ChatMessage.role == "assistant")
            .order_by(ChatMessage.id.desc()).limit(SCAN)
        )
        for data in rows:
            if isinstance(data, Mapping) and "dialogue" in data:
                return DialogueState.from_dict(data["dialogue"])
    return DialogueState()


def empty_state() -> DialogueState:
    return DialogueState(calls=(), shown=None, asked_text=None)


__all__ = ["CallRecord", "DialogueState", "Shown", "empty_state", "entities", "label", "load_state"]


def inverse_step(record: CallRecord, *, changed_only: bool = True) -> Step | None:
    """The call that reverses `record`, or None when it cannot be reversed or changed nothing.

    changed_only=False: the inverse's arguments even where the call changed nothing ("already there"): what
    names the thing it was about (an event's id), for changing that thing in place ("change it to 4pm")."""
    undo = record.undo
    if not isinstance(undo, Mapping) or not isinstance(undo.get("function"), str):
        return None
    when = undo.get("when")
    if changed_only and isinstance(when, str) and is_empty(resolve_ref(when, record.args, record.result)):
        return None
    refs = undo.get("args")
    if not isinstance(refs, Mapping):
        return Step(record.agent, undo["function"], dict(record.args))
    args = {}
    for name, ref in refs.items():
        value = resolve_ref(str(ref), record.args, record.result)
        if value is not MISSING and value is not None:
            args[name] = value
    return Step(record.agent, undo["function"], args)
