"""Memories in the kernel store. Functions take the caller's session, so a change
and the audit entry that records it commit together."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from dreamer.contracts.errors import DreamerError
from dreamer.contracts.names import NAME
from dreamer.kernel.memory.text import clean_fact, fact_key
from dreamer.kernel.store.models import Memory

# An agent holding memory:write must not be able to fill the store without end.
MAX_MEMORIES_PER_USER = 1000  # the user's own facts
MAX_FACTS_PER_AGENT = 100  # facts one agent may add (memory:write)
MAX_AGENT_FACTS = 300  # ... and all agents together
_SOURCE = re.compile(rf"user|agent:{NAME}")


@dataclass(frozen=True)
class Fact:
    id: int
    text: str
    source: str
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "source": self.source, "created_at": self.created_at.isoformat()}


def _fact(row: Memory) -> Fact:
    return Fact(row.id, row.text, row.source, row.created_at)


def add_memory(session: Session, user_id: int, text: object, source: str) -> tuple[Fact, bool]:
    """Store a fact for the user; (the fact, True) when new, (the one already kept, False)
    when the user's memory already holds it in other words ("I am" for "I'm")."""
    if not _SOURCE.fullmatch(source):
        raise ValueError(f"a memory's source is 'user' or 'agent:<name>', not {source!r}")
    cleaned = clean_fact(text)
    key = fact_key(cleaned)
    found = _by_key(session, user_id, key)
    if found is not None:
        if source == "user" and found.source != "user":
            found.source = "user"  # the user said it too: it is theirs now, and outranks agents' facts
        return _fact(found), False
    # The user's facts and the agents' are counted apart: an agent can fill only its own share,
    # never the room the user's own facts need.
    if source == "user":
        count = _count(session, user_id, Memory.source == "user")
        if count >= MAX_MEMORIES_PER_USER:
            raise DreamerError(
                "payload_too_large",
                f"Sidekick's memory already holds {MAX_MEMORIES_PER_USER} of your facts; "
                "forget some first (`dreamer memory forget ID`)",
            )
    else:
        if _count(session, user_id, Memory.source == source) >= MAX_FACTS_PER_AGENT:
            raise DreamerError(
                "payload_too_large",
                f"{source.removeprefix('agent:')} already added {MAX_FACTS_PER_AGENT} facts to Sidekick's memory, "
                "the most one agent may; the user can forget some (`dreamer memory forget ID`)",
            )
        if _count(session, user_id, Memory.source != "user") >= MAX_AGENT_FACTS:
            raise DreamerError(
                "payload_too_large",
                f"agents already added {MAX_AGENT_FACTS} facts to Sidekick's memory, the most all agents together may",
            )
    row = Memory(user_id=user_id, text=cleaned, key=key, source=source)
    session.add(row)
    # A concurrent request storing the same fact makes this raise IntegrityError;
    # dreamer.kernel.memory.facts tries once more, and then finds it.
    session.flush()
    return _fact(row), True


def _count(session: Session, user_id: int, where: Any) -> int:
    return session.scalar(select(func.count()).select_from(Memory).where(Memory.user_id == user_id, where)) or 0


def list_memories(session: Session, user_id: int) -> list[Fact]:
    """The user's facts, oldest first."""
    rows = session.scalars(select(Memory).where(Memory.user_id == user_id).order_by(Memory.id))
    return [_fact(r) for r in rows]


def delete_memory(session: Session, user_id: int, memory_id: int) -> Fact:
    """Remove one of the user's facts; not_found for another user's or a missing one."""
    row = session.get(Memory, memory_id)
    if row is None or row.user_id != user_id:
        raise DreamerError("not_found", f"there is no memory {memory_id} (see `dreamer memory` for the ids)")
    gone = _fact(row)
    session.delete(row)
    return gone


def _by_key(session: Session, user_id: int, key: str) -> Memory | None:
    return session.scalar(select(Memory).where(Memory.user_id == user_id, Memory.key == key))
