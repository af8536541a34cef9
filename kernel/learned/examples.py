"""Personal examples: a phrasing -> function one user taught Sidekick, kept per user.

Sidekick calls `learn` when the user picks an option of a "which did you mean"
question (and `demote` for the options passed over), and `lookup` before planning a
message. Only the user's own rows are ever read, so one user's picks never route
another user's messages.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select

from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import LearnedExample, utcnow

MAX_PHRASE = 500
MAX_PER_USER = 2000  # the oldest are forgotten beyond this
_NOT_WORD = re.compile(r"[^\w']+")


@dataclass(frozen=True)
class Learned:
    id: int
    phrase: str
    agent: str
    function: str
    args: dict[str, Any]
    weight: float
    source: str


def phrase_key(text: str) -> str:
    """The phrasing as compared: case, accents, punctuation and spacing do not matter."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch)).replace("’", "'")
    return " ".join(_NOT_WORD.sub(" ", folded).split())[:MAX_PHRASE]


def learn(store: Store, user_id: int, phrase: str, agent: str, function: str, args: dict[str, Any],
          weight: float = 1.0, source: str = "picked") -> Learned | None:
    """Keep (or strengthen) phrase -> agent.function for this user; None for an empty phrasing."""
    key = phrase_key(phrase)
    if not key:
        return None
    with store.session() as s:
        row = s.scalars(select(LearnedExample).where(
            LearnedExample.user_id == user_id, LearnedExample.key == key,
            LearnedExample.agent == agent, LearnedExample.function == function)).first()
        if row is None:
            row = LearnedExample(user_id=user_id, key=key, phrase=phrase[:MAX_PHRASE], agent=agent, function=function,
                                 args=args, weight=weight, source=source)
            s.add(row)
            _trim(s, user_id)
        else:
            row.weight = weight if (row.weight > 0) != (weight > 0) else row.weight + weight
            row.args, row.source, row.updated_at = args, source, utcnow()
        s.flush()
        return _public(row)


def demote(store: Store, user_id: int, phrase: str, agent: str, function: str) -> None:
    learn(store, user_id, phrase, agent, function, {}, weight=-1.0, source="passed over")


def lookup(store: Store, user_id: int, phrase: str) -> list[Learned]:
    """This user's examples for the phrasing, strongest first."""
    key = phrase_key(phrase)
    if not key:
        return []
    with store.session() as s:
        rows = s.scalars(select(LearnedExample).where(LearnedExample.user_id == user_id, LearnedExample.key == key)
                         .order_by(LearnedExample.weight.desc(), LearnedExample.updated_at.desc()))
        return [_public(r) for r in rows]


def list_learned(store: Store, user_id: int) -> list[Learned]:
    with store.session() as s:
        rows = s.scalars(select(LearnedExample).where(LearnedExample.user_id == user_id).order_by(LearnedExample.id))
        return [_public(r) for r in rows]


def forget(store: Store, user_id: int, example_id: int) -> bool:
    with store.session() as s:
        done = s.execute(delete(LearnedExample).where(LearnedExample.user_id == user_id, LearnedExample.id == example_id))
        return bool(getattr(done, "rowcount", 0))  # a DELETE's CursorResult


def _trim(s: Any, user_id: int) -> None:
    ids = list(s.scalars(select(LearnedExample.id).where(LearnedExample.user_id == user_id)
                         .order_by(LearnedExample.id.desc()).offset(MAX_PER_USER)))
    if ids:
        s.execute(delete(LearnedExample).where(LearnedExample.id.in_(ids)))


def _public(row: LearnedExample) -> Learned:
    return Learned(row.id, row.phrase, row.agent, row.function, dict(row.args or {}), float(row.weight), row.source)
