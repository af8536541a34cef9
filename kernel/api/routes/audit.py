from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from sqlalchemy import select

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.kernel.audit.log import entry_dict, verify
from dreamer.kernel.store.models import AuditEntry

router = APIRouter(prefix="/v1/audit", tags=["audit"])


@router.get("")
def entries(
    k: KernelDep, who: PrincipalDep, limit: int = Query(100, ge=1, le=10_000), agent: str | None = None
) -> list[dict[str, Any]]:
    """The user's audit entries, newest first."""
    with k.store.session() as s:
        q = select(AuditEntry).where(AuditEntry.user_id == who.user_id)
        if agent:
            q = q.where((AuditEntry.actor == f"agent:{agent}") | AuditEntry.target.startswith(agent))
        return [entry_dict(e) for e in s.scalars(q.order_by(AuditEntry.seq.desc()).limit(limit))]


@router.get("/verify")
def verify_chain(k: KernelDep, _: PrincipalDep) -> dict[str, Any]:
    """Recompute the whole hash chain; any edited, removed or reordered entry breaks it."""
    with k.store.session() as s:
        result = verify(s)
    return {"ok": result.ok, "entries": result.entries, "first_bad": result.first_bad, "reason": result.reason}
