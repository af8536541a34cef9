"""Users and their API tokens."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.models import ApiToken, User

if TYPE_CHECKING:
    from dreamer.kernel.store.db import Store

USER_NAME_RE = re.compile(r"[a-z][a-z0-9_-]{0,31}")
TOKEN_PREFIX = "drm_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def create_user(session: Session, name: str, *, is_admin: bool = False) -> tuple[User, str]:
    """Create a user and their first token; the token is returned once and never stored."""
    if not USER_NAME_RE.fullmatch(name):
        raise DreamerError(
            "invalid_argument",
            f"user name {name!r} is not allowed; use 1-32 lowercase letters, digits, '-' or '_', starting with a letter",
        )
    if session.scalar(select(User).where(User.name == name)) is not None:
        raise DreamerError("conflict", f"a user named {name!r} already exists")
    user = User(name=name, is_admin=is_admin)
    session.add(user)
    session.flush()
    token = new_token()
    session.add(ApiToken(user_id=user.id, token_hash=hash_token(token), label="cli"))
    session.flush()
    return user, token


def user_for_token(session: Session, token: str) -> User | None:
    row = session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(token)))
    return None if row is None else session.get(User, row.user_id)


def get_user(session: Session, name: str) -> User:
    user = session.scalar(select(User).where(User.name == name))
    if user is None:
        raise DreamerError("not_found", f"there is no user named {name!r}")
    return user


def list_users(session: Session) -> list[User]:
    return list(session.scalars(select(User).order_by(User.id)))


@dataclass(frozen=True)
class KnownUser:
    id: int
    name: str
    timezone: str
    is_admin: bool


class TokenCache:
    """Token → user, so a request does not pay two queries to learn who sent it.

    Keyed by the token's hash, like the store. Tokens are never changed in place;
    whatever removes a token or a user must call `clear()`.
    """

    def __init__(self, limit: int = 10_000) -> None:
        self._users: dict[str, KnownUser] = {}
        self._limit = limit

    def get(self, token: str) -> KnownUser | None:
        return self._users.get(hash_token(token))

    def put(self, token: str, user: User) -> KnownUser:
        known = KnownUser(user.id, user.name, user.timezone, user.is_admin)
        if len(self._users) >= self._limit:
            self._users.clear()
        self._users[hash_token(token)] = known
        return known

    def clear(self) -> None:
        self._users.clear()


def bearer_user(tokens: TokenCache, store: "Store", authorization: str | None) -> KnownUser:
    """The user an `Authorization: Bearer <token>` header names (API and MCP gateway alike)."""
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise DreamerError(
            "unauthorized",
            "no API token; send `Authorization: Bearer <token>` (the CLI reads it from $DREAMER_HOME/credentials)",
        )
    user = tokens.get(token)
    if user is None:
        with store.session() as s:
            found = user_for_token(s, token)
            if found is None:
                raise DreamerError("unauthorized", "the API token is not valid for this kernel")
            user = tokens.put(token, found)
    return user
