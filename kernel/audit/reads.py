"""What a user may read of the audit log: their entries, and whether the chain holds.

The chain is one for the whole installation, so its seq numbers and links count
everyone's actions. An ordinary user sees their own entries numbered 1, 2, 3 … among
themselves and no links; only the administrator sees seq and hashes (issue 14, finding 9).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from dreamer.kernel.audit.log import entry_dict, verify
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import AuditEntry, User

DAMAGED = "the installation's audit log is damaged; ask the administrator to run `dreamer audit verify`"


@dataclass(frozen=True)
class ChainCheck:
    """The answer of `dreamer audit verify`: the installation's count and where the chain
    breaks for the administrator; for anyone else, whether it holds and how many are theirs."""

    ok: bool
    entries: int
    first_bad: int | None
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_admin(store: Store, who: Principal) -> bool:
    """The administrator signed in as themselves (not acting for someone)."""
    with store.session() as s:
        user = s.get(User, who.user_id)
        return who.via is None and user is not None and user.is_admin


def entries(
    store: Store, who: Principal, limit: int, agent: str | None = None, invocation: str | None = None
) -> list[dict[str, Any]]:
    """The user's audit entries, newest first (an agent's: those it made or that name it;
    `invocation`: only those of that run)."""
    admin = is_admin(store, who)
    with store.session() as s:
        # The page is picked in SQL; only its own rows are then numbered (never the whole log).
        q = select(AuditEntry).where(AuditEntry.user_id == who.user_id)
        if agent:
            q = q.where((AuditEntry.actor == f"agent:{agent}") | AuditEntry.target.startswith(agent))
        if invocation:
            q = q.where(AuditEntry.invocation_id == invocation)
        rows = list(s.scalars(q.order_by(AuditEntry.seq.desc()).limit(limit)))
        numbers = {} if admin or not rows else _own_numbers(s, who.user_id, rows[-1].seq)
        out = []
        for row in rows:
            entry = entry_dict(row)
            if not admin:
                entry["seq"] = numbers[row.seq]
                del entry["prev_hash"], entry["hash"]
            out.append(entry)
        return out


def _own_numbers(s: Session, user_id: int, oldest: int) -> dict[int, int]:
    """seq -> the entry's number among the user's own (1, 2, 3 …), for the user's entries from
    `oldest` on: their count minus how many of theirs are newer. Reads seqs only, and only
    those from the page's oldest row on (all of them: a filtered page has gaps)."""
    total = s.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.user_id == user_id)) or 0
    newest_first = s.scalars(select(AuditEntry.seq).where(AuditEntry.user_id == user_id, AuditEntry.seq >= oldest)
                             .order_by(AuditEntry.seq.desc()))
    return {seq: total - newer for newer, seq in enumerate(newest_first)}


def check_chain(store: Store, who: Principal) -> ChainCheck:
    """Recompute the whole hash chain; any edited, removed or reordered entry breaks it."""
    with store.session() as s:
        result = verify(s)
        if is_admin(store, who):
            return ChainCheck(result.ok, result.entries, result.first_bad, result.reason)
        mine = s.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.user_id == who.user_id)) or 0
    return ChainCheck(result.ok, mine, None, None if result.ok else DAMAGED)
