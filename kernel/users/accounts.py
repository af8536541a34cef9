"""Users and their API tokens."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.store.models import ApiToken, Installation, User

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


def visible_user(session: Session, who: Principal, name: str) -> User:
    """The user `name`, if the asker may look at them: themselves, or anyone for the
    administrator or an administrator acting for someone; otherwise not found."""
    asking = session.get(User, who.user_id)
    target = session.scalar(select(User).where(User.name == name))
    allowed_to = target is not None and (target.id == who.user_id or (asking is not None and asking.is_admin) or who.via)
    if target is None or not allowed_to:
        raise DreamerError("not_found", f"there is no user named {name!r} you may look at")
    return target


def delete_account(session: Session, who: Principal, name: str) -> tuple[int, list[str]]:
    """Delete the user `name` and every row of theirs (ON DELETE CASCADE); answers their id
    and the agents they had, whose cached entries must go too. Nobody removes themselves,
    and the last administrator stays."""
    user = get_user(session, name)
    if user.id == who.user_id or user.name == who.via:
        raise DreamerError("invalid_argument", "you cannot remove yourself; another administrator can")
    if user.is_admin and len(list(session.scalars(select(User.id).where(User.is_admin.is_(True))))) <= 1:
        raise DreamerError("invalid_argument", f"{name} is the last administrator")
    user_id = user.id
    agents = list(session.scalars(select(Installation.agent).where(Installation.user_id == user_id)))
    session.delete(user)
    return user_id, agents


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
        self._enabled = True
        self.on_clear: Callable[[], None] | None = None  # set on a cluster node: tells the other nodes

    def get(self, token: str) -> KnownUser | None:
        return self._users.get(hash_token(token))

    def put(self, token: str, user: User) -> KnownUser:
        known = KnownUser(user.id, user.name, user.timezone, user.is_admin)
        if not self._enabled:
            return known
        if len(self._users) >= self._limit:
            self._users.clear()
        self._users[hash_token(token)] = known
        return known

    def clear(self) -> None:
        self.clear_here()
        if self.on_clear is not None:
            self.on_clear()

    def clear_here(self) -> None:
        """Empty this process's cache only (what another node's revocation asks for)."""
        self._users.clear()

    def set_enabled(self, enabled: bool) -> None:
        """Off while a cluster node cannot hear the others: every request reads the store."""
        self._enabled = enabled
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
