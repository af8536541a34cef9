"""Web sign-in passwords, hashed with argon2id (argon2-cffi's defaults follow RFC 9106)."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy.orm import Session

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.models import User

MIN_LENGTH = 8
MAX_LENGTH = 1024  # argon2 takes any length; a bound keeps a hostile sign-in from costing much

_hasher = PasswordHasher()
# Verifying a password of a user who has none still costs one hash, so timing does not say which names exist.
_DUMMY = _hasher.hash("dreamer: no password set")


def set_password(session: Session, user: User, password: str) -> None:
    if not isinstance(password, str) or len(password) < MIN_LENGTH:
        raise DreamerError("invalid_argument", f"the password is too short; use at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise DreamerError("invalid_argument", f"the password is longer than {MAX_LENGTH} characters")
    user.password_hash = _hasher.hash(password)


def check_password(user: User | None, password: str) -> bool:
    """True when `password` is the user's; False for a wrong one, no user, or no password set."""
    stored = user.password_hash if user is not None else None
    if not isinstance(password, str) or len(password) > MAX_LENGTH:
        return False
    try:
        return _hasher.verify(stored or _DUMMY, password) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False
