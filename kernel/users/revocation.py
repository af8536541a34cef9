"""Ending what a revoked credential still holds open: streams and requests in flight.

A request is checked once, when it arrives; a stream it opened (an invocation's logs,
a chat answer) may stay open for hours, and an MCP client's call may wait on a slow
function. Every revocation (a token revoked, a browser session ended, a password
changed, a user removed) calls `Revocations.bump()`; each open stream and each request
run under `while_valid` then checks its own credential again at once and ends if it is
gone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from sqlalchemy import select

from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ApiToken, WebSession

# ("token", sha256 of the token) or ("session", web session id)
Credential = tuple[str, str]


@dataclass
class Revocations:
    """Wakes open streams when something is revoked. Bumps come from the event loop and from
    the threads of sync routes (revoking a token is one); a stream that was between two waits
    when a bump came sees it by the generation, so no bump is missed."""

    _event: asyncio.Event = field(default_factory=asyncio.Event)
    on_bump: Callable[[], None] | None = None  # set on a cluster node: wakes the other nodes' streams too
    generation: int = 0
    _loop: asyncio.AbstractEventLoop | None = None

    def bump(self) -> None:
        """Something was revoked: wake every open stream to check its credential."""
        self.bump_here()
        if self.on_bump is not None:
            self.on_bump()

    def bump_here(self) -> None:
        self.generation += 1
        loop = self._loop
        if loop is not None and not _running_on(loop) and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake)  # an asyncio.Event is not to be set from another thread
        else:
            self._wake()

    def _wake(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    def changed(self) -> asyncio.Event:
        self._loop = asyncio.get_running_loop()
        return self._event


def _running_on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


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
    seen = revocations.generation
    try:
        while True:
            following = asyncio.ensure_future(iterator.__anext__())
            while True:
                if revocations.generation == seen:
                    woken = asyncio.ensure_future(revocations.changed().wait())
                    done, _ = await asyncio.wait({following, woken}, return_when=asyncio.FIRST_COMPLETED)
                    woken.cancel()
                    if following in done and revocations.generation == seen:
                        break
                seen = revocations.generation  # a bump, now or while an item was being passed on
                if not still_valid(store, credential):
                    following.cancel()
                    # Let the cancelled step finish first: closing a generator that is still
                    # running raises, and the client would see a cut connection, not an end.
                    await asyncio.gather(following, return_exceptions=True)
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


async def while_valid(
    work: Awaitable[None], revocations: Revocations, store: Store, credential: Credential | None
) -> bool:
    """Runs `work`; cancels it as soon as `credential` is revoked. False when it was cancelled so."""
    task = asyncio.ensure_future(work)
    seen = revocations.generation
    try:
        while True:
            if revocations.generation == seen:
                woken = asyncio.ensure_future(revocations.changed().wait())
                done, _ = await asyncio.wait({task, woken}, return_when=asyncio.FIRST_COMPLETED)
                woken.cancel()
                if task in done:
                    task.result()
                    return True
            seen = revocations.generation
            if not still_valid(store, credential):
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                return False
    finally:
        if not task.done():  # our own caller was cancelled (the client went away)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
