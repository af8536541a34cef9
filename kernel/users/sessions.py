"""Browser sessions of the web app, kept in the kernel store so they can be listed and revoked.

The cookie carries a random secret; the store keeps its sha256 and a per-session CSRF
token the page sends back on every unsafe request (X-CSRF-Token header or a form field).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import User, WebSession, utcnow
from dreamer.kernel.store.tables import rowcount

LIFETIME = timedelta(days=14)


@dataclass(frozen=True)
class SignedIn:
    session_id: str
    user_id: int
    user_name: str
    timezone: str
    is_admin: bool
    csrf: str
    how: str

    def csrf_ok(self, offered: str | None) -> bool:
        return bool(offered) and hmac.compare_digest(self.csrf.encode(), str(offered).encode())


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def open_session(session: Session, user: User, how: str, user_agent: str = "") -> tuple[str, SignedIn]:
    """A new session for `user`; returns the cookie secret (shown once) and the session."""
    # Expired sessions go when new ones come, so the table does not grow with every sign-in.
    session.execute(delete(WebSession).where(WebSession.expires_at < utcnow()))
    secret = secrets.token_urlsafe(32)
    row = WebSession(
        id="ses_" + secrets.token_hex(12), user_id=user.id, secret_hash=_hash(secret), csrf=secrets.token_urlsafe(32),
        how=how, user_agent=(user_agent or "")[:300], expires_at=utcnow() + LIFETIME,
    )
    session.add(row)
    session.flush()
    return secret, _signed_in(row, user)


def find_session(session: Session, secret: str | None) -> SignedIn | None:
    if not secret or len(secret) > 200:
        return None
    row = session.scalar(select(WebSession).where(WebSession.secret_hash == _hash(secret)))
    if row is None:
        return None
    if _aware(row.expires_at) <= datetime.now(timezone.utc):
        session.delete(row)
        return None
    user = session.get(User, row.user_id)
    return None if user is None else _signed_in(row, user)


def list_sessions(store: Store, user_id: int) -> list[dict[str, str]]:
    """The browsers signed in as this user, newest first."""
    with store.session() as session:
        rows = session.scalars(select(WebSession).where(WebSession.user_id == user_id).order_by(WebSession.created_at.desc()))
        return [
            {"id": r.id, "how": r.how, "user_agent": r.user_agent, "created_at": r.created_at.isoformat(),
             "expires_at": r.expires_at.isoformat()}
            for r in rows
        ]


def revoke_session(session: Session, user_id: int, session_id: str) -> None:
    row = session.get(WebSession, session_id)
    if row is None or row.user_id != user_id:
        raise DreamerError("not_found", f"no session {session_id!r}; `GET /v1/sessions` lists yours")
    session.delete(row)


def revoke_all(session: Session, user_id: int) -> int:
    return rowcount(session.execute(delete(WebSession).where(WebSession.user_id == user_id)))


def _signed_in(row: WebSession, user: User) -> SignedIn:
    return SignedIn(row.id, user.id, user.name, user.timezone, user.is_admin, row.csrf, row.how)


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)  # SQLite gives naive datetimes back
