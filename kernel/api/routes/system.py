from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from dreamer.kernel.api.deps import AdminDep, KernelDep, PrincipalDep
from dreamer.kernel.api.schemas import UserBody
from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.users.service import list_users

router = APIRouter()
VERSION = "0.1.0"


@router.get("/healthz", tags=["system"])
def healthz() -> dict[str, Any]:
    return {"ok": True, "version": VERSION}


@router.get("/v1/me", tags=["users"])
def me(k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    from dreamer.kernel.store.models import User

    with k.store.session() as s:
        user = s.get(User, who.user_id)
        return {"name": who.user_name, "is_admin": bool(user and user.is_admin), "acting_as": bool(who.via)}


@router.get("/v1/users", tags=["users"])
def users(k: KernelDep, _: AdminDep) -> list[dict[str, Any]]:
    with k.store.session() as s:
        return [{"name": u.name, "is_admin": u.is_admin, "created_at": u.created_at.isoformat()} for u in list_users(s)]


@router.post("/v1/users", status_code=201, tags=["users"])
async def add_user(body: UserBody, k: KernelDep, who: AdminDep) -> dict[str, Any]:
    user, token = await k.add_user(body.name)
    with k.store.session() as s:
        audit(s, user_id=who.user_id, actor=who.actor, action="users.add", target=user.name, decision="allow")
    return {"name": user.name, "token": token}
