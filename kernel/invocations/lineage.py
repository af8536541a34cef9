"""Which run a call belongs to: the outermost run of its chain (recipes.plan_dinner for the
grocery.add_items it made), so a page can show a run and the calls it made together even when
they fall on different pages of the list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from dreamer.kernel.store.models import Invocation

MAX_DEPTH = 64  # more than any call chain may be deep (the invoker refuses deeper ones)


@dataclass(frozen=True)
class Root:
    id: str
    caller: str
    created_at: datetime


def roots_of(s: Session, user_id: int, rows: Sequence[Invocation]) -> dict[str, Root]:
    """Each row's outermost run (itself when nothing called it), reading the user's own rows only."""
    known: dict[str, tuple[str | None, str, datetime]] = {r.id: (r.parent_id, r.caller, r.created_at) for r in rows}
    wanted = {r.parent_id for r in rows if r.parent_id and r.parent_id not in known}
    for _ in range(MAX_DEPTH):
        if not wanted:
            break
        found = s.execute(
            select(Invocation.id, Invocation.parent_id, Invocation.caller, Invocation.created_at)
            .where(Invocation.user_id == user_id, Invocation.id.in_(wanted))
        ).all()
        for rid, parent, caller, created in found:
            known[rid] = (parent, caller, created)
        wanted = {p for p, _, _ in (known[f[0]] for f in found) if p and p not in known}

    def root(rid: str) -> Root:
        for _ in range(MAX_DEPTH):
            parent = known[rid][0]
            if not parent or parent not in known:  # a parent another user's, or since removed: stop here
                break
            rid = parent
        _, caller, created = known[rid]
        return Root(rid, caller, created)

    return {r.id: root(r.id) for r in rows}
