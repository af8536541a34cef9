"""A user's choice to keep their traces out of every training export (issue 20).

One small setting of its own (`users.export_opt_out`), named for export: turning it on
also stops the gateway keeping their prompts for export (kernel/llm/requests_log.py).
"""

from __future__ import annotations

from sqlalchemy import select, update

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import User


def opted_out(store: Store, user_id: int) -> bool:
    with store.session() as s:
        found = s.scalar(select(User.export_opt_out).where(User.id == user_id))
    if found is None:
        raise DreamerError("not_found", "no such user")
    return bool(found)


def set_opted_out(store: Store, user_id: int, value: bool) -> bool:
    with store.session() as s:
        s.execute(update(User).where(User.id == user_id).values(export_opt_out=value))
    return value
