from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select

from dreamer.kernel.api.deps import AdminDep, KernelDep, PrincipalDep
from dreamer.kernel.api.schemas import UserBody
from dreamer.kernel.audit.log import append as audit
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.models import User
from dreamer.kernel.users.quotas import account_usage
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
        return {
            "name": who.user_name, "is_admin": bool(user and user.is_admin), "acting_as": bool(who.via),
            "timezone": user.timezone if user else who.timezone,
        }


class MeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    timezone: str = Field(min_length=1, max_length=64)


@router.patch("/v1/me", tags=["users"])
def change_me(body: MeBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Set the user's time zone (an IANA name such as Europe/Paris); cron triggers follow it."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from dreamer.kernel.store.models import User

    try:
        ZoneInfo(body.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise DreamerError("invalid_argument", f"{body.timezone[:64]!r} is not a time zone name; use one like Europe/Paris or UTC") from None
    with k.store.session() as s:
        user = s.get(User, who.user_id)
        assert user is not None
        user.timezone = body.timezone
        audit(s, user_id=who.user_id, actor=who.actor, action="users.timezone", target=who.user_name,
              decision="allow", detail={"timezone": body.timezone})
    k.tokens.clear()  # cached principals carry the old zone
    if k.triggers.cron is not None:
        k.triggers.cron.sync_user(who.user_id)
    return me(k, who.__class__(who.user_id, who.user_name, body.timezone, who.via))


@router.get("/v1/users", tags=["users"])
def users(k: KernelDep, _: AdminDep) -> list[dict[str, Any]]:
    with k.store.session() as s:
        return [{"name": u.name, "is_admin": u.is_admin, "created_at": u.created_at.isoformat()} for u in list_users(s)]


@router.get("/v1/users/{name}/quota", tags=["users"])
async def user_quota(name: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """What the user holds against each of their quotas (`dreamer users show`): one's own,
    or anyone's for the administrator."""
    with k.store.session() as s:
        asking = s.get(User, who.user_id)
        target = s.scalar(select(User).where(User.name == name))
        allowed_to = target is not None and (target.id == who.user_id or (asking is not None and asking.is_admin) or who.via)
        if target is None or not allowed_to:
            raise DreamerError("not_found", f"there is no user named {name!r} you may look at")
        user_id, user_name = target.id, target.name
    return await account_usage(k.settings, k.store, k.pool, user_id, user_name)


@router.post("/v1/users", status_code=201, tags=["users"])
async def add_user(body: UserBody, k: KernelDep, who: AdminDep) -> dict[str, Any]:
    user, token = await k.add_user(body.name)
    with k.store.session() as s:
        audit(s, user_id=who.user_id, actor=who.actor, action="users.add", target=user.name, decision="allow")
    return {"name": user.name, "token": token}
