"""Web sign-in: a user's password and their browser sessions (listed, revoked)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.kernel.api.schemas import _Body
from dreamer.kernel.audit.log import append as audit
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.models import User
from dreamer.kernel.users.passwords import MAX_LENGTH, set_password
from dreamer.kernel.users.accounts import get_user
from dreamer.kernel.users.sessions import list_sessions, revoke_all, revoke_session

router = APIRouter(prefix="/v1", tags=["users"])


class PasswordBody(_Body):
    password: str = Field(max_length=MAX_LENGTH)


@router.put("/users/{name}/password")
def password(name: str, body: PasswordBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Set the password a user signs in to the web app with (their own; an administrator: anyone's).
    Every browser session of that user ends."""
    with k.store.session() as s:
        target = get_user(s, name)
        acting = s.get(User, who.user_id)
        if target.id != who.user_id and who.via is None and not (acting and acting.is_admin):
            raise DreamerError("forbidden", "only an administrator may set another user's password")
        set_password(s, target, body.password)
        ended = revoke_all(s, target.id)
        audit(s, user_id=target.id, actor=who.actor, action="users.password", target=name, decision="allow",
              detail={"sessions_ended": ended})
    k.revocations.bump()
    return {"name": name, "password_set": True, "sessions_ended": ended}


@router.get("/sessions")
def sessions(k: KernelDep, who: PrincipalDep) -> list[dict[str, Any]]:
    """The browsers signed in as this user."""
    return list_sessions(k.store, who.user_id)


@router.delete("/sessions/{session_id}")
def revoke(session_id: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Sign a browser out; its next request is refused."""
    with k.store.session() as s:
        revoke_session(s, who.user_id, session_id)
        audit(s, user_id=who.user_id, actor=who.actor, action="sessions.revoke", target=session_id, decision="allow")
    k.revocations.bump()
    return {"revoked": session_id}
