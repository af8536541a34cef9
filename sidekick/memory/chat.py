"""Sidekick's turn when the message is about its memory: remember, recall or forget.

Runs before any planning and calls no agent; the facts go to the kernel's memory
(dreamer.kernel.memory), where agents with memory:read find them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.memory.search import find
from dreamer.kernel.memory.facts import forget, memories, remember
from dreamer.kernel.memory.store import Fact
from dreamer.kernel.store.db import Store
from dreamer.sidekick.memory.extract import Forget, Recall, Remember, read_memory_intent, second_person

HOW_TO_FORGET = "Say “forget that …” or run `dreamer memory forget ID` to remove one."


@dataclass(frozen=True)
class MemoryTurn:
    reply: str
    action: str  # remembered | known | listed | forgotten | not_found | ambiguous | refused
    memories: list[dict[str, Any]] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return {"action": self.action, "memories": self.memories}


def memory_turn(store: Store, who: Principal, text: str, *, answering: bool = False) -> MemoryTurn | None:
    """Sidekick's answer when `text` is wholly about its memory; None to plan as usual."""
    intent = read_memory_intent(text, answering=answering)
    if isinstance(intent, Remember):
        return _remember(store, who, intent.fact)
    if isinstance(intent, Recall):
        return _recall(memories(store, who.user_id))
    if isinstance(intent, Forget):
        return _forget(store, who, intent)
    return None


def _remember(store: Store, who: Principal, fact: str) -> MemoryTurn:
    try:
        added = remember(store, who.user_id, who.actor, fact, source="user", via="chat")
    except DreamerError as exc:
        return MemoryTurn(f"I could not remember that: {exc.message}.", "refused")
    said = second_person(added.fact.text)
    if added.created:
        return MemoryTurn(f"I'll remember that {said}.", "remembered", [added.fact.to_dict()])
    return MemoryTurn(f"I already remember that {said}.", "known", [added.fact.to_dict()])


def _recall(facts: Sequence[Fact]) -> MemoryTurn:
    if not facts:
        return MemoryTurn(
            "I don't remember anything about you yet. Tell me things like “I'm vegetarian” or “I live in Lyon”.",
            "listed",
        )
    return MemoryTurn(
        "Here is what I remember about you:\n" + _lines(facts) + "\n" + HOW_TO_FORGET,
        "listed", [f.to_dict() for f in facts],
    )


def _forget(store: Store, who: Principal, intent: Forget) -> MemoryTurn:
    if intent.memory_id is not None:
        chosen = intent.memory_id
    else:
        found = find(intent.what, memories(store, who.user_id))
        if not found:
            return MemoryTurn(
                f"I don't remember that {second_person(intent.what)}. Ask “what do you remember about me” to see what I do.",
                "not_found",
            )
        if len(found) > 1:
            return MemoryTurn(
                "Several things I remember fit that:\n" + _lines(found) + "\nSay which, for example “forget memory "
                f"{found[0].id}”.",
                "ambiguous", [f.to_dict() for f in found],
            )
        chosen = found[0].id
    try:
        gone = forget(store, who.user_id, who.actor, chosen, via="chat")
    except DreamerError as exc:
        return MemoryTurn(f"I could not forget that: {exc.message}.", "not_found")
    return MemoryTurn(f"I've forgotten that {second_person(gone.text)}.", "forgotten", [gone.to_dict()])


def _lines(facts: Sequence[Fact]) -> str:
    return "\n".join(
        f"  #{f.id} {f.text}" + (f" (noted by {f.source.removeprefix('agent:')})" if f.source != "user" else "")
        for f in facts
    )
