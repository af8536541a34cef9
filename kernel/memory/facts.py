"""What a person does with their memory (through the API or by telling Sidekick):
each change is audited. The audit entry names the memory's id and never its text,
so a fact the user deletes is gone from the store, not kept in the audit chain."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError

from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.memory.store import Fact, add_memory, delete_memory, list_memories
from dreamer.kernel.store.db import Store


@dataclass(frozen=True)
class Added:
    fact: Fact
    created: bool  # False: the memory already held this fact


def remember(
    store: Store, user_id: int, actor: str, text: object, *, source: str = "user", via: str = "api",
    invocation_id: str | None = None,
) -> Added:
    """Store a fact and audit it (`actor` as in the audit log: user:me, agent:recipes, ...)."""
    try:
        return _remember_once(store, user_id, actor, text, source, via, invocation_id)
    except IntegrityError:
        # A concurrent request stored the same fact first; this time it is found.
        return _remember_once(store, user_id, actor, text, source, via, invocation_id)


def _remember_once(
    store: Store, user_id: int, actor: str, text: object, source: str, via: str, invocation_id: str | None
) -> Added:
    with store.session() as s:
        fact, created = add_memory(s, user_id, text, source)
        if created:
            audit(
                s, user_id=user_id, actor=actor, action="memory.write", target=f"memory:{fact.id}",
                decision="allow", detail={"source": source, "via": via, "chars": len(fact.text)},
                invocation_id=invocation_id,
            )
    return Added(fact, created)


def forget(store: Store, user_id: int, actor: str, memory_id: int, *, via: str = "api") -> Fact:
    """Delete one of the user's facts and audit it."""
    with store.session() as s:
        gone = delete_memory(s, user_id, memory_id)
        audit(
            s, user_id=user_id, actor=actor, action="memory.delete", target=f"memory:{memory_id}",
            decision="allow", detail={"source": gone.source, "via": via},
        )
    return gone


def memories(store: Store, user_id: int) -> list[Fact]:
    with store.session() as s:
        return list_memories(s, user_id)
