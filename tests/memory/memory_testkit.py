"""Helpers shared by the memory tests (a module of its own, so tests can import it by a unique name)."""

from __future__ import annotations

from dreamer.kernel.store.db import Store
from dreamer.kernel.users.accounts import create_user


def new_user(store: Store, name: str) -> int:
    with store.session() as s:
        user, _token = create_user(s, name)
        return user.id
