"""A revocation ends an open stream even when it comes between two of the stream's items,
or from a route's worker thread (sync routes, such as revoking a token, bump from there)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from dreamer.kernel.store.db import Store
from dreamer.kernel.users.revocation import Revocations, until_revoked

GONE = ("token", "a token no row holds")  # still_valid finds nothing: revoked


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    s.migrate()
    yield s
    s.dispose()


async def ticks() -> AsyncIterator[bytes]:
    n = 0
    while True:
        n += 1
        yield f"tick {n}".encode()
        await asyncio.sleep(0.01)


def test_a_bump_between_two_items_is_not_missed(store: Store) -> None:
    async def main() -> list[bytes]:
        revocations = Revocations()
        got: list[bytes] = []
        async for item in until_revoked(ticks(), revocations, store, GONE, b"<closed>"):
            got.append(item)
            if len(got) == 3:
                revocations.bump()  # while the stream is passing an item on, waiting on nothing
            if len(got) > 50:
                break
        return got

    got = asyncio.run(main())
    assert got[-1] == b"<closed>" and len(got) == 4


def test_a_bump_from_another_thread_wakes_the_stream(store: Store) -> None:
    async def slow() -> AsyncIterator[bytes]:
        yield b"first"
        await asyncio.sleep(30)  # nothing else would wake the loop
        yield b"never"

    async def main() -> list[bytes]:
        revocations = Revocations()
        got: list[bytes] = []
        async for item in until_revoked(slow(), revocations, store, GONE, b"<closed>"):
            got.append(item)
            if item == b"first":
                asyncio.get_running_loop().call_later(0.2, lambda: threading.Thread(target=revocations.bump).start())
        return got

    got = asyncio.run(asyncio.wait_for(main(), 10))
    assert got == [b"first", b"<closed>"]
