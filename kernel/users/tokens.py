"""A user's API tokens: listed (never their values: only hashes are kept), created, revoked.

Each change is audited in the transaction that makes it. The caller empties the token
cache and wakes open streams after a revocation (kernel/users/revocation.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ApiToken
from dreamer.kernel.users.accounts import hash_token, new_token

MAX_TOKENS = 50


@dataclass(frozen=True)
class TokenRow:
    id: int
    label: str
    created_at: datetime

    @classmethod
    def of(cls, t: ApiToken) -> TokenRow:
        return cls(t.id, t.label, t.created_at)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "created_at": self.created_at.isoformat()}


@dataclass(frozen=True)
class NewToken:
    row: TokenRow
    token: str  # shown this once

    def to_dict(self) -> dict[str, Any]:
        return self.row.to_dict() | {"token": self.token}


def list_tokens(store: Store, user_id: int) -> list[TokenRow]:
    with store.session() as s:
        return [TokenRow.of(t) for t in s.scalars(select(ApiToken).where(ApiToken.user_id == user_id).order_by(ApiToken.id))]


def create_token(store: Store, who: Principal, label: str) -> NewToken:
    """A new token for the user, at most MAX_TOKENS of them."""
    token = new_token()
    with store.session() as s:
        held = s.scalar(select(func.count()).select_from(ApiToken).where(ApiToken.user_id == who.user_id)) or 0
        if held >= MAX_TOKENS:
            raise DreamerError("conflict", f"you already have {MAX_TOKENS} tokens; revoke one first (`dreamer tokens revoke ID`)")
        row = ApiToken(user_id=who.user_id, token_hash=hash_token(token), label=label)
        s.add(row)
        s.flush()
        audit(s, user_id=who.user_id, actor=who.actor, action="tokens.create", target=str(row.id), decision="allow",
              detail={"label": label})
        return NewToken(TokenRow.of(row), token)


def revoke_token(store: Store, who: Principal, token_id: int) -> None:
    """Delete one of the user's tokens; another user's is not found."""
    with store.session() as s:
        row = s.get(ApiToken, token_id)
        if row is None or row.user_id != who.user_id:
            raise DreamerError("not_found", f"you have no token {token_id}; `dreamer tokens list` shows yours")
        s.delete(row)
        audit(s, user_id=who.user_id, actor=who.actor, action="tokens.revoke", target=str(token_id), decision="allow")
