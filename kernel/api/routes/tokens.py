"""API tokens (listed, created, revoked) and removing a user.

Every revocation takes effect at once: the token cache is emptied and open streams
recheck their credential (kernel/users/revocation.py)."""

from __future__ import annotations

import shutil
from typing import Any

from fastapi import APIRouter
from pydantic import Field
from sqlalchemy import select

from dreamer.kernel.api.deps import AdminDep, KernelDep, PrincipalDep
from dreamer.kernel.api.schemas import _Body
from dreamer.kernel.audit.log import append as audit
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.models import ApiToken, Installation, User
from dreamer.kernel.users.service import get_user, hash_token, new_token

router = APIRouter(prefix="/v1", tags=["users"])
MAX_TOKENS = 50


class TokenBody(_Body):
    label: str = Field(default="cli", min_length=1, max_length=100)


def _row(t: ApiToken) -> dict[str, Any]:
    return {"id": t.id, "label": t.label, "created_at": t.created_at.isoformat()}


@router.get("/tokens")
def list_tokens(k: KernelDep, who: PrincipalDep) -> list[dict[str, Any]]:
    """The user's API tokens (never their values: only hashes are kept)."""
    with k.store.session() as s:
        return [_row(t) for t in s.scalars(select(ApiToken).where(ApiToken.user_id == who.user_id).order_by(ApiToken.id))]


@router.post("/tokens", status_code=201)
def create_token(body: TokenBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """A new API token for the user; its value is shown this once."""
    token = new_token()
    with k.store.session() as s:
        if len(list(s.scalars(select(ApiToken.id).where(ApiToken.user_id == who.user_id)))) >= MAX_TOKENS:
            raise DreamerError("conflict", f"you already have {MAX_TOKENS} tokens; revoke one first (`dreamer tokens revoke ID`)")
        row = ApiToken(user_id=who.user_id, token_hash=hash_token(token), label=body.label)
        s.add(row)
        s.flush()
        audit(s, user_id=who.user_id, actor=who.actor, action="tokens.create", target=str(row.id), decision="allow",
              detail={"label": body.label})
        answer = _row(row) | {"token": token}
    return answer


@router.delete("/tokens/{token_id}")
def revoke_token(token_id: int, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Revoke one token: requests and open streams made with it are refused from now on."""
    with k.store.session() as s:
        row = s.get(ApiToken, token_id)
        if row is None or row.user_id != who.user_id:
            raise DreamerError("not_found", f"you have no token {token_id}; `dreamer tokens list` shows yours")
        s.delete(row)
        audit(s, user_id=who.user_id, actor=who.actor, action="tokens.revoke", target=str(token_id), decision="allow")
    k.tokens.clear()
    k.revocations.bump()
    return {"revoked": token_id}


@router.delete("/users/{name}")
async def remove_user(name: str, k: KernelDep, who: AdminDep, purge: bool = False) -> dict[str, Any]:
    """Remove a user: their tokens, sessions, agents, grants, tool servers, conversations,
    memory and invocations go with them at once; their files under $DREAMER_HOME/users/NAME
    are kept unless `purge`; audit entries are kept (the log is append-only)."""
    with k.store.session() as s:
        user = get_user(s, name)
        if user.id == who.user_id or user.name == who.via:
            raise DreamerError("invalid_argument", "you cannot remove yourself; another administrator can")
        if user.is_admin and len(list(s.scalars(select(User.id).where(User.is_admin.is_(True))))) <= 1:
            raise DreamerError("invalid_argument", f"{name} is the last administrator")
        user_id = user.id
        agents = list(s.scalars(select(Installation.agent).where(Installation.user_id == user_id)))
        s.delete(user)  # every row of theirs goes with it (ON DELETE CASCADE)
        audit(s, user_id=who.user_id, actor=who.actor, action="users.remove", target=name, decision="allow",
              detail={"purge": purge})
    k.tokens.clear()
    k.revocations.bump()
    for agent in agents:  # an id may be given again to a new user: nothing cached may outlive this one
        k.installer.cache.forget(user_id, agent)
    await k.invoker.pool.evict(name)
    if k.tools is not None:
        await k.tools.evict(name)
    folder = k.settings.users_dir / name
    if purge:
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "removed": name, "purged": purge,
        "data": "deleted" if purge else f"kept in {folder}; delete it with `dreamer users remove {name} --purge`",
    }
