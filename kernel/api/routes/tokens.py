"""API tokens (listed, created, revoked) and removing a user.

Every revocation takes effect at once: the token cache is emptied and open streams
recheck their credential (kernel/users/revocation.py)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from dreamer.kernel.api.deps import AdminDep, KernelDep, PrincipalDep
from dreamer.kernel.api.schemas import _Body
from dreamer.kernel.users import tokens

router = APIRouter(prefix="/v1", tags=["users"])


class TokenBody(_Body):
    label: str = Field(default="cli", min_length=1, max_length=100)


@router.get("/tokens")
def list_tokens(k: KernelDep, who: PrincipalDep) -> list[dict[str, Any]]:
    """The user's API tokens (never their values: only hashes are kept)."""
    return [t.to_dict() for t in tokens.list_tokens(k.store, who.user_id)]


@router.post("/tokens", status_code=201)
def create_token(body: TokenBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """A new API token for the user; its value is shown this once."""
    return tokens.create_token(k.store, who, body.label).to_dict()


@router.delete("/tokens/{token_id}")
def revoke_token(token_id: int, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Revoke one token: requests and open streams made with it are refused from now on."""
    tokens.revoke_token(k.store, who, token_id)
    k.tokens.clear()
    k.revocations.bump()
    return {"revoked": token_id}


@router.delete("/users/{name}")
async def remove_user(name: str, k: KernelDep, who: AdminDep, purge: bool = False) -> dict[str, Any]:
    """Remove a user: their tokens, sessions, agents, grants, tool servers, conversations,
    memory and invocations go with them at once; their files under $DREAMER_HOME/users/NAME
    are kept unless `purge`; audit entries are kept (the log is append-only)."""
    folder = await k.remove_user(who, name, purge)
    return {
        "removed": name, "purged": purge,
        "data": "deleted" if purge else f"kept in {folder}; delete it with `dreamer users remove {name} --purge`",
    }
