from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.kernel.audit import reads

router = APIRouter(prefix="/v1/audit", tags=["audit"])


@router.get("")
def entries(
    k: KernelDep, who: PrincipalDep, limit: int = Query(100, ge=1, le=10_000), agent: str | None = None,
    invocation: Annotated[str | None, Query(max_length=40)] = None,
) -> list[dict[str, Any]]:
    """The user's audit entries, newest first (`invocation`: only those of that run)."""
    return reads.entries(k.store, who, limit, agent, invocation)



@router.get("/verify")
def verify_chain(k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Recompute the whole hash chain; any edited, removed or reordered entry breaks it.

    The administrator gets the installation's count and where it breaks; anyone else
    gets whether it holds and how many of the entries are theirs."""
    return reads.check_chain(k.store, who).to_dict()
