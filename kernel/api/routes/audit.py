from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from sqlalchemy import func, select

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.kernel.audit.log import entry_dict, verify
from dreamer.kernel.invocations.service import Principal
from dreamer.kernel.store.models import AuditEntry, User

router = APIRouter(prefix="/v1/audit", tags=["audit"])

# The chain is one for the whole installation, so its seq numbers and links count
# everyone's actions. An ordinary user sees their own entries numbered 1, 2, 3 … among
# themselves and no links; only the administrator sees seq and hashes (issue 14, finding 9).
DAMAGED = "the installation's audit log is damaged; ask the administrator to run `dreamer audit verify`"


def _is_admin(k: Any, who: Principal) -> bool:
    with k.store.session() as s:
        user = s.get(User, who.user_id)
        return who.via is None and user is not None and user.is_admin


@router.get("")
def entries(
    k: KernelDep, who: PrincipalDep, limit: int = Query(100, ge=1, le=10_000), agent: str | None = None
) -> list[dict[str, Any]]:
    """The user's audit entries, newest first."""
    admin = _is_admin(k, who)
    with k.store.session() as s:
        own = (
            select(AuditEntry, func.row_number().over(order_by=AuditEntry.seq).label("n"))
            .where(AuditEntry.user_id == who.user_id)
            .subquery()
        )
        q = select(own)
        if agent:
            q = q.where((own.c.actor == f"agent:{agent}") | own.c.target.startswith(agent))
        rows = s.execute(q.order_by(own.c.seq.desc()).limit(limit)).all()
        out = []
        for row in rows:
            entry = entry_dict(AuditEntry(**{c.name: getattr(row, c.name) for c in AuditEntry.__table__.c}))
            if not admin:
                entry["seq"] = row.n
                del entry["prev_hash"], entry["hash"]
            out.append(entry)
        return out


@router.get("/verify")
def verify_chain(k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Recompute the whole hash chain; any edited, removed or reordered entry breaks it.

    The administrator gets the installation's count and where it breaks; anyone else
    gets whether it holds and how many of the entries are theirs."""
    with k.store.session() as s:
        result = verify(s)
        if _is_admin(k, who):
            return {"ok": result.ok, "entries": result.entries, "first_bad": result.first_bad, "reason": result.reason}
        mine = s.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.user_id == who.user_id)) or 0
    return {"ok": result.ok, "entries": mine, "first_bad": None, "reason": None if result.ok else DAMAGED}
