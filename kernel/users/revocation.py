"""Ending what a revoked credential still holds open: server-sent event streams.

A request is checked once, when it arrives; a stream it opened (an invocation's logs,
a chat answer) may stay open for hours. Every revocation (a token revoked, a browser
session ended, a password changed, a user removed) calls `Revocations.bump()`; each open
stream then checks its own credential again at once and ends if it is gone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime, timezone

from sqlalchemy import select

from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ApiToken, WebSession

# ("token", sha256 of the token) or ("session", web session id)
Credential = tuple[str, str]


@dataclass
class Revocations:
    _event: asyncio.Event = field(default_factory=asyncio.Event)

    def bump(self) -> None:
        """Something was revoked: wake every open stream to check its credential."""
        self._event.set()
        self._event = asyncio.Event()

    def changed(self) -> asyncio.Event:
        return self._event


def still_valid(store: Store, credential: Credential | None) -> bool:
    if credential is None:
        return True  # a stream opened without a credential of its own (none today)
    kind, key = credential
    with store.session() as s:
        if kind == "token":
            return s.scalar(select(ApiToken.id).where(ApiToken.token_hash == key)) is not None
        row = s.get(WebSession, key)
        if row is None:
            return False
        expires = row.expires_at if row.expires_at.tzinfo else row.expires_at.replace(tzinfo=timezone.utc)
        return expires > datetime.now(timezone.utc)


async def until_revoked(
    events: AsyncIterator[bytes], revocations: Revocations, store: Store, credential: Credential | None, closing: bytes
) -> AsyncIterator[bytes]:
    """`events`, ended with `closing` as soon as `credential` is revoked."""
    iterator = events.__aiter__()
    try:
        while True:
            following = asyncio.ensure_future(iterator.__anext__())
            while True:
                woken = asyncio.ensure_future(revocations.changed().wait())
                done, _ = await asyncio.wait({following, woken}, return_when=asyncio.FIRST_COMPLETED)
                woken.cancel()
                if following in done:
                    break
                if not still_valid(store, credential):
                    following.cancel()
                    yield closing
                    return
            try:
                item = following.result()
            except StopAsyncIteration:
                return
            yield item
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()
