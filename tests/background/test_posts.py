"""posts.create and events.emit as the kernel serves them to a running agent: grants checked
and audited, hostile input refused with one sentence and nothing written. In process, on
SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from dreamer.kernel.config import Settings, load_settings
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.invocations.principal import Caller, Principal
from dreamer.kernel.invocations.syscalls import SyscallContext, default_table
from dreamer.kernel.posts.feed import feed
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import AuditEntry, Grant, Post
from dreamer.kernel.store.writer import GroupWriter
from dreamer.kernel.posts.signal import FeedSignal
from dreamer.kernel.users.accounts import create_user


@dataclass
class Kernel:
    """What a syscall handler reaches through ctx.invoker."""

    store: Store
    cache: InstallCache
    syscalls: dict[str, Any] = field(default_factory=default_table)
    settings: Settings = field(default_factory=load_settings)  # posts.create reads the feed quota
    feed: FeedSignal = field(default_factory=FeedSignal)  # and wakes the user's open feed streams
    writer: GroupWriter = field(init=False)

    def __post_init__(self) -> None:
        self.writer = GroupWriter(self.store)


def _world(store: Store) -> tuple[Kernel, int]:
    with store.session() as s:
        user, _ = create_user(s, "ada")
        user_id = user.id
    return Kernel(store, InstallCache(store)), user_id


@pytest.fixture
def world(store: Store) -> Iterator[tuple[Kernel, int]]:
    """SQLite and PostgreSQL."""
    world = _world(store)
    yield world
    world[0].writer.close()


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[tuple[Kernel, int]]:
    """SQLite only, for the many cases of bad input."""
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    world = _world(store)
    yield world
    world[0].writer.close()
    store.dispose()


def call(kernel: Kernel, user_id: int, method: str, params: dict[str, Any], agent: str = "watch") -> Any:
    ctx = SyscallContext(kernel, Principal(user_id, "ada"), Caller("agent", agent=agent), "inv_test")  # type: ignore[arg-type]
    return asyncio.run(kernel.syscalls[method](ctx, params))


def refused(kernel: Kernel, user_id: int, params: dict[str, Any]) -> DreamerError:
    with pytest.raises(DreamerError) as caught:
        call(kernel, user_id, "posts.create", params)
    assert "\n" not in caught.value.message
    return caught.value


def test_a_post_needs_the_notify_grant_and_lands_in_the_feed(world: tuple[Kernel, int]) -> None:
    kernel, ada = world
    denied = refused(kernel, ada, {"text": "hello"})
    assert denied.code == "permission_denied" and "dreamer grant watch notify" in denied.message
    with kernel.store.session() as s:
        s.add(Grant(user_id=ada, agent="watch", scope="notify"))
    kernel.cache.forget(ada, "watch")
    first = call(kernel, ada, "posts.create", {"text": "page changed", "priority": "urgent", "attachments": [{"url": "u"}]})
    second = call(kernel, ada, "posts.create", {"text": "again"})
    assert second["id"] > first["id"]
    posts = feed(kernel.store, ada)
    assert [(p["text"], p["priority"], p["attachments"]) for p in posts] == [
        ("again", "normal", []), ("page changed", "urgent", [{"url": "u"}]),
    ]
    assert posts[0]["invocation_id"] == "inv_test" and posts[0]["agent"] == "watch"
    with kernel.store.session() as s:
        decisions = [e.decision for e in s.scalars(select(AuditEntry).where(AuditEntry.action == "posts.create"))]
    assert decisions == ["deny", "allow", "allow"]


@pytest.mark.parametrize(
    ("params", "code", "words"),
    [
        ({"text": ""}, "invalid_argument", "text"),
        ({"text": "   "}, "invalid_argument", "empty"),
        ({"text": 5}, "invalid_argument", "text"),
        ({"text": "x" * 10_001}, "invalid_argument", "text"),
        ({"text": "x", "priority": "shouting"}, "invalid_argument", "priority"),
        ({"text": "x", "attachments": "a"}, "invalid_argument", "attachments"),
        ({"text": "x", "attachments": [0] * 21}, "invalid_argument", "attachments"),
        ({"text": "x", "attachments": ["y" * 70_000]}, "payload_too_large", "at most 65536"),
        ({"text": "x", "extra": 1}, "invalid_argument", "extra"),
    ],
)
def test_hostile_posts_are_refused_and_nothing_is_written(
    lite: tuple[Kernel, int], params: dict[str, Any], code: str, words: str
) -> None:
    kernel, ada = lite
    with kernel.store.session() as s:
        s.add(Grant(user_id=ada, agent="watch", scope="notify"))
    error = refused(kernel, ada, params)
    assert error.code == code and words in error.message
    with kernel.store.session() as s:
        assert s.scalar(select(func.count()).select_from(Post)) == 0
