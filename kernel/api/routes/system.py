from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from dreamer.kernel.api.deps import AdminDep, KernelDep, PrincipalDep
from dreamer.kernel.api.schemas import UserBody
from dreamer.kernel.audit.log import append as audit
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.users.quotas import account_usage
from dreamer.kernel.users.accounts import list_users, visible_user

router = APIRouter()
VERSION = "0.1.0"


@router.get("/healthz", tags=["system"], response_model=None)
def healthz(request: Request) -> dict[str, Any] | JSONResponse:
    """200 while the kernel serves; 503 on a cluster node being drained (`dreamer nodes drain`),
    so the load balancer sends it no new requests."""
    cluster = getattr(getattr(request.app.state, "kernel", None), "cluster", None)
    if cluster is not None and cluster.draining:
        return JSONResponse({"ok": False, "version": VERSION, "draining": True}, status_code=503)
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
        target = visible_user(s, who, name)
        user_id, user_name = target.id, target.name
    return await account_usage(k.settings, k.store, k.pool, user_id, user_name)


@router.post("/v1/users", status_code=201, tags=["users"])
async def add_user(body: UserBody, k: KernelDep, who: AdminDep) -> dict[str, Any]:
    user, token = await k.add_user(body.name)
    with k.store.session() as s:
        audit(s, user_id=who.user_id, actor=who.actor, action="users.add", target=user.name, decision="allow")
    return {"name": user.name, "token": token}
