"""Personal examples: a phrasing -> function one user taught Sidekick, kept per user.

Sidekick calls `learn` when the user picks an option of a "which did you mean"
question, rephrases after a miss or a wrong call, or rates an answer up (and `demote`
for the options passed over, the call undone or corrected, the answer rated down), and
`lookup` / `demoted` / `phrasings` before planning a message. Only the user's own rows
are read, and the rows an administrator promoted to everyone (the user's own row for
the same phrasing and function wins), so one user's corrections never route another
user's messages unless promoted. A user who opted out (`users.learning` false) is
taught nothing: `learn` keeps no row for them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, or_, select

from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import LearnedExample, User, utcnow

MAX_PHRASE = 500
MAX_PER_USER = 2000  # the oldest are forgotten beyond this
MAX_PHRASINGS = 200  # positive examples handed to the planner's matcher per user, newest first
_NOT_WORD = re.compile(r"[^\w']+")
_SLOT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Learned:
    id: int
    phrase: str
    agent: str
    function: str
    args: dict[str, Any]
    weight: float
    source: str
    everyone: bool = False
    user: str = ""  # whose correction it was (shown to an administrator)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "phrase": self.phrase, "agent": self.agent, "function": self.function,
                "args": self.args, "weight": self.weight, "kind": "prefer" if self.weight > 0 else "avoid",
                "source": self.source, "everyone": self.everyone, "user": self.user}


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
        if not _learning(s, user_id):
            return None
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


def demote(store: Store, user_id: int, phrase: str, agent: str, function: str, source: str = "passed over") -> None:
    learn(store, user_id, phrase, agent, function, {}, weight=-1.0, source=source)


def lookup(store: Store, user_id: int, phrase: str) -> list[Learned]:
    """The examples that apply to this user for the phrasing, strongest first: their own,
    then promoted ones for a function they have no row of their own for."""
    key = phrase_key(phrase)
    if not key:
        return []
    with store.session() as s:
        rows = s.scalars(select(LearnedExample).where(
            LearnedExample.key == key, or_(LearnedExample.user_id == user_id, LearnedExample.everyone.is_(True))))
        found = _applying(list(rows), user_id)
    return sorted(found, key=lambda x: -x.weight)


def demoted(store: Store, user_id: int, phrase: str) -> set[str]:
    """The functions ("agent.function") this phrasing must not be routed to for this user."""
    return {f"{x.agent}.{x.function}" for x in lookup(store, user_id, phrase) if x.weight < 0}


def phrasings(store: Store, user_id: int, limit: int = MAX_PHRASINGS) -> list[Learned]:
    """The positive examples that apply to this user (newest first): added to the functions'
    own examples, so the planner's matcher also routes phrasings near them."""
    with store.session() as s:
        rows = s.scalars(select(LearnedExample).where(
            or_(LearnedExample.user_id == user_id, LearnedExample.everyone.is_(True)))
            .order_by(LearnedExample.updated_at.desc()).limit(limit * 4))
        found = _applying(list(rows), user_id)
    return [x for x in found if x.weight > 0][:limit]


def list_learned(store: Store, user_id: int, all_users: bool = False) -> list[Learned]:
    """What was learned for this user (their own rows and the promoted ones), or, for an
    administrator's `all_users`, every user's."""
    with store.session() as s:
        query = select(LearnedExample, User.name).join(User, User.id == LearnedExample.user_id)
        if not all_users:
            query = query.where(or_(LearnedExample.user_id == user_id, LearnedExample.everyone.is_(True)))
        return [_public(row, name) for row, name in s.execute(query.order_by(LearnedExample.id))]


def forget(store: Store, user_id: int, example_id: int, admin: bool = False) -> bool:
    """Delete one of the user's examples (an administrator: any user's)."""
    with store.session() as s:
        query = delete(LearnedExample).where(LearnedExample.id == example_id)
        if not admin:
            query = query.where(LearnedExample.user_id == user_id)
        done = s.execute(query)
        return bool(getattr(done, "rowcount", 0))  # a DELETE's CursorResult


def promote(store: Store, example_id: int, everyone: bool = True) -> Learned | None:
    """An administrator's choice: this example routes every user's messages (or no longer does)."""
    with store.session() as s:
        row = s.get(LearnedExample, example_id)
        if row is None:
            return None
        row.everyone, row.updated_at = everyone, utcnow()
        s.flush()
        owner = s.get(User, row.user_id)
        return _public(row, owner.name if owner else "")


def learning_enabled(store: Store, user_id: int) -> bool:
    with store.session() as s:
        return _learning(s, user_id)


def set_learning(store: Store, user_id: int, on: bool) -> None:
    """The user's setting; turning learning off keeps what was learned (they can delete it)."""
    with store.session() as s:
        user = s.get(User, user_id)
        if user is not None:
            user.learning = on


def as_example(example: Learned) -> str:
    """The example in the planner's syntax: its words, each argument's value made a slot
    ("add oat milk" with items ["oat milk"] -> "add {items}"), so "add rice" fits it too."""
    words = phrase_key(example.phrase).split()
    for name, value in example.args.items():
        if not _SLOT_NAME.match(name):
            continue
        values = value if isinstance(value, list) else [value]
        spans = [_find(words, phrase_key(str(v)).split()) for v in values if isinstance(v, (str, int, float))]
        if not spans or any(span is None for span in spans):
            continue
        start = min(span[0] for span in spans if span is not None)
        end = max(span[1] for span in spans if span is not None)
        words = words[:start] + ["{" + name + "}"] + words[end:]
    return " ".join(words)


def _find(words: list[str], wanted: list[str]) -> tuple[int, int] | None:
    if not wanted:
        return None
    for i in range(len(words) - len(wanted) + 1):
        if words[i:i + len(wanted)] == wanted:
            return i, i + len(wanted)
    return None


def _learning(s: Any, user_id: int) -> bool:
    user = s.get(User, user_id)
    return bool(user is not None and user.learning)


def _applying(rows: list[LearnedExample], user_id: int) -> list[Learned]:
    """Own rows, then promoted rows for a (phrasing, function) the user has no row of."""
    own = {(r.key, r.agent, r.function) for r in rows if r.user_id == user_id}
    kept = [r for r in rows if r.user_id == user_id]
    seen = set(own)
    for r in rows:
        if r.user_id != user_id and (r.key, r.agent, r.function) not in seen:
            seen.add((r.key, r.agent, r.function))
            kept.append(r)
    return [_public(r) for r in kept]


def _trim(s: Any, user_id: int) -> None:
    ids = list(s.scalars(select(LearnedExample.id).where(LearnedExample.user_id == user_id)
                         .order_by(LearnedExample.id.desc()).offset(MAX_PER_USER)))
    if ids:
        s.execute(delete(LearnedExample).where(LearnedExample.id.in_(ids)))


def _public(row: LearnedExample, user: str = "") -> Learned:
    return Learned(row.id, row.phrase, row.agent, row.function, dict(row.args or {}), float(row.weight), row.source,
                   bool(row.everyone), user)
