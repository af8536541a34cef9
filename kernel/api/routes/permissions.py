from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.kernel.api.schemas import ScopeBody

router = APIRouter(prefix="/v1", tags=["permissions"])


@router.get("/permissions")
def permissions(k: KernelDep, who: PrincipalDep, agent: str | None = None) -> list[dict[str, Any]]:
    return k.installer.permissions(who, agent)


@router.post("/agents/{agent}/grants")
async def grant(agent: str, body: ScopeBody, k: KernelDep, who: PrincipalDep) -> list[dict[str, Any]]:
    return await k.installer.grant(who, agent, body.scope)


@router.delete("/agents/{agent}/grants")
async def revoke(agent: str, scope: str, k: KernelDep, who: PrincipalDep) -> list[dict[str, Any]]:
    return await k.installer.revoke(who, agent, scope)
