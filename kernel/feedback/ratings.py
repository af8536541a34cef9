"""A user's thumbs up/down (and an optional note) on a Sidekick answer or an invocation.

Ratings are rows of the same `rewards` table `ctx.emit_reward` writes, with source "user"
(1.0 up, -1.0 down, the note as message), so whatever reads rewards (the invocation view,
the trace export) reads both. A rating of a Sidekick answer ("turn_<id>") is kept on the
turn and on every invocation that turn made. Rating the same thing again replaces the
earlier rating: one user's opinion of one answer is one value, not a tally.

Only the user's own turns and invocations can be rated; anything else is "not found",
so the reply does not tell one user what ids another has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ChatMessage, Conversation, Invocation, Reward
from dreamer.kernel.store.tables import table

MAX_NOTE_CHARS = 500
SOURCE = "user"
SIDEKICK = "sidekick"  # the `agent` of a rating of a turn itself
_TURN = re.compile(r"^turn_([1-9][0-9]{0,17})$")
_INVOCATION = re.compile(r"^inv_[0-9a-f]{32}$")
_REWARDS = table(Reward)


@dataclass(frozen=True)
class RatedTurn:
    """What a rated Sidekick answer was: the user's words before it, and the calls it made."""

    turn_id: int
    user_text: str
    calls: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Rating:
    target: str
    value: float
    note: str | None
    invocations: tuple[str, ...]  # the invocations the rating was also kept on
    turn: RatedTurn | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "rating": "up" if self.value > 0 else "down", "value": self.value,
                "note": self.note, "invocations": list(self.invocations)}


def rating_value(rating: Any) -> float:
    if rating == "up":
        return 1.0
    if rating == "down":
        return -1.0
    raise DreamerError("invalid_argument", "a rating is \"up\" or \"down\"")


def clean_note(note: Any) -> str | None:
    if note is None:
        return None
    if not isinstance(note, str) or len(note) > MAX_NOTE_CHARS:
        raise DreamerError("invalid_argument", f"a note is text of at most {MAX_NOTE_CHARS} characters")
    note = " ".join(note.split())
    return note or None


def rate(store: Store, user_id: int, target: Any, rating: Any, note: Any = None) -> Rating:
    """Keep the user's rating of `target` ("turn_<id>" or an invocation id), replacing an earlier one."""
    value, note = rating_value(rating), clean_note(note)
    if not isinstance(target, str):
        raise DreamerError("invalid_argument", "name what you rate: a Sidekick answer (turn_<id>) or an invocation (inv_…)")
    turn = _TURN.match(target)
    if turn is None and not _INVOCATION.match(target):
        raise DreamerError("invalid_argument",
                           f"{target[:80]!r} is neither a Sidekick answer (turn_<id>) nor an invocation id (inv_…)")
    with store.session() as s:
        if turn is not None:
            rated = _own_turn(s, user_id, int(turn.group(1)), target)
            invocations = _own_invocations(s, user_id, rated.calls)
            s.execute(delete(Reward).where(Reward.source == SOURCE, Reward.user_id == user_id,
                                           Reward.turn_id == rated.turn_id))
            kept: list[tuple[str | None, str]] = [(None, SIDEKICK), *invocations]
            for inv_id, agent in kept:
                s.add(Reward(invocation_id=inv_id, agent=agent, user_id=user_id, value=value, note=note, source=SOURCE,
                             turn_id=rated.turn_id))
            return Rating(target, value, note, tuple(i for i, _ in invocations), rated)
        run = s.get(Invocation, target)
        if run is None or run.user_id != user_id:
            raise DreamerError("not_found", f"no invocation {target!r}")
        s.execute(delete(Reward).where(Reward.source == SOURCE, Reward.user_id == user_id,
                                       Reward.invocation_id == target, Reward.turn_id.is_(None)))
        s.add(Reward(invocation_id=target, agent=run.agent, user_id=user_id, value=value, note=note, source=SOURCE,
                     turn_id=None))
        return Rating(target, value, note, (target,))


def ratings_of_turns(store: Store, user_id: int, turn_ids: list[int]) -> dict[int, float]:
    """The user's rating (1 or -1) of each of these answers that has one, for showing the buttons pressed."""
    if not turn_ids:
        return {}
    with store.session() as s:
        rows = s.execute(select(_REWARDS.c.turn_id, _REWARDS.c.value).where(
            _REWARDS.c.source == SOURCE, _REWARDS.c.user_id == user_id, _REWARDS.c.invocation_id.is_(None),
            _REWARDS.c.turn_id.in_(turn_ids[:1000])))
        return {int(r.turn_id): float(r.value) for r in rows}


def ratings_of_invocations(session: Session, user_id: int, invocation_ids: list[str]) -> dict[str, float]:
    """The user's own rating of each of these invocations (a direct rating wins over one via a turn)."""
    if not invocation_ids:
        return {}
    rows = session.execute(select(_REWARDS.c.invocation_id, _REWARDS.c.value, _REWARDS.c.turn_id).where(
        _REWARDS.c.source == SOURCE, _REWARDS.c.user_id == user_id,
        _REWARDS.c.invocation_id.in_(invocation_ids[:1000])).order_by(_REWARDS.c.id))
    found: dict[str, float] = {}
    direct: set[str] = set()
    for r in rows:
        if r.turn_id is None:
            direct.add(r.invocation_id)
            found[r.invocation_id] = float(r.value)
        elif r.invocation_id not in direct:
            found[r.invocation_id] = float(r.value)
    return found


def _own_turn(s: Session, user_id: int, turn_id: int, target: str) -> RatedTurn:
    msg = s.get(ChatMessage, turn_id)
    conv = s.get(Conversation, msg.conversation_id) if msg is not None else None
    if msg is None or conv is None or conv.user_id != user_id or msg.role != "assistant":
        raise DreamerError("not_found", f"no Sidekick answer {target!r}")
    asked = s.scalars(select(ChatMessage.content).where(
        ChatMessage.conversation_id == msg.conversation_id, ChatMessage.id < turn_id, ChatMessage.role == "user")
        .order_by(ChatMessage.id.desc()).limit(1)).first()
    data = msg.data if isinstance(msg.data, dict) else {}
    calls = tuple(c for c in data.get("calls") or () if isinstance(c, dict))
    return RatedTurn(turn_id, asked or "", calls)


def _own_invocations(s: Session, user_id: int, calls: tuple[dict[str, Any], ...]) -> list[tuple[str, str]]:
    """The invocations of the turn's calls that are this user's (a tool server call has none)."""
    ids = [c["invocation_id"] for c in calls if isinstance(c.get("invocation_id"), str)]
    if not ids:
        return []
    rows = s.execute(select(Invocation.id, Invocation.agent).where(
        Invocation.id.in_(ids), Invocation.user_id == user_id))
    found = {r.id: r.agent for r in rows}
    return [(i, found[i]) for i in dict.fromkeys(ids) if i in found]


__all__ = ["Rating", "RatedTurn", "rate", "ratings_of_invocations", "ratings_of_turns"]
