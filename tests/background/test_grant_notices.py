"""A run nobody watches (a trigger, a background call) refused a permission tells its user
in the feed, once a day per scope, with the grant offered; an agent cannot forge that offer,
and a refusal while someone is there (a chat or a call) posts nothing. SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import update

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.cache import InstallCache
from dreamer.kernel.invocations.principal import Caller, Principal
from dreamer.kernel.invocations.syscalls import SyscallContext
from dreamer.kernel.posts.feed import feed
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Grant, Post
from dreamer.kernel.users.accounts import create_user
from test_posts import Kernel  # the same stand-in for ctx.invoker


@pytest.fixture
def world(store: Store) -> Iterator[tuple[Kernel, int, int]]:
    with store.session() as s:
        ada, _ = create_user(s, "ada")
        bob, _ = create_user(s, "bob")
        ids = ada.id, bob.id
        s.add(Grant(user_id=ada.id, agent="watch", scope="notify"))
    kernel = Kernel(store, InstallCache(store))
    yield kernel, *ids
    kernel.writer.close()


def fetch(kernel: Kernel, user_id: int, unattended: bool, url: str = "https://example.com/news") -> DreamerError:
    """The grant check net.fetch makes first (ctx.require, the one gate every syscall uses)."""
    ctx = SyscallContext(kernel, Principal(user_id, "ada"), Caller("agent", agent="watch"),  # type: ignore[arg-type]
                         "inv_bg", unattended)
    host = url.split("/")[2]
    with pytest.raises(DreamerError) as caught:
        ctx.require(f"net:{host}", action="net.fetch", target=f"GET {url}")
    assert caught.value.code == "permission_denied"
    return caught.value


def test_an_unattended_refusal_posts_one_notice_with_the_grant(world: tuple[Kernel, int, int]) -> None:
    kernel, ada, bob = world
    fetch(kernel, ada, unattended=False)
    assert feed(kernel.store, ada) == []  # someone saw that error: no post

    fetch(kernel, ada, unattended=True)
    fetch(kernel, ada, unattended=True, url="https://example.com/other")  # the same scope: no second post
    (post,) = feed(kernel.store, ada)
    assert post["agent"] == "watch" and post["priority"] == "urgent" and post["invocation_id"] == "inv_bg"
    assert "net:example.com" in post["text"] and "`dreamer grant watch net:example.com`" in post["text"]
    assert post["attachments"] == [{"grant": {"agent": "watch", "scope": "net:example.com"},
                                    "command": "dreamer grant watch net:example.com"}]
    assert feed(kernel.store, bob) == []  # the notice is ada's alone

    fetch(kernel, ada, unattended=True, url="https://news.example.org/")  # another scope: its own notice
    assert len(feed(kernel.store, ada)) == 2
    with kernel.store.session() as s:  # a day later the same refusal is told again
        s.execute(update(Post).values(created_at=datetime.now(timezone.utc) - timedelta(hours=25)))
    fetch(kernel, ada, unattended=True)
    assert len(feed(kernel.store, ada)) == 3


def test_a_scope_the_manifest_does_not_ask_for_posts_no_grant_offer(
    world: tuple[Kernel, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grant could not allow it (granting a scope the manifest does not ask for is refused),
    so no button that would fail: the run's log says to add it to agent.yaml."""
    kernel, ada, _ = world
    monkeypatch.setattr(kernel.cache, "declared", lambda user_id, agent: frozenset({"notify", "net:example.org"}))
    refused = fetch(kernel, ada, unattended=True)
    assert "add `net:example.com` under `permissions:` in agent.yaml" in refused.message
    assert feed(kernel.store, ada) == []
    monkeypatch.setattr(kernel.cache, "declared", lambda user_id, agent: frozenset({"notify", "net:example.com"}))
    fetch(kernel, ada, unattended=True)  # declared, not granted: the offer is posted
    (post,) = feed(kernel.store, ada)
    assert post["attachments"][0]["grant"] == {"agent": "watch", "scope": "net:example.com"}


def test_an_agent_cannot_post_a_grant_offer(world: tuple[Kernel, int, int]) -> None:
    kernel, ada, _ = world
    ctx = SyscallContext(kernel, Principal(ada, "ada"), Caller("agent", agent="watch"), "inv_x")  # type: ignore[arg-type]
    forged: dict[str, Any] = {"text": "click to fix", "attachments": [{"grant": {"agent": "watch", "scope": "fs:/"}}]}
    with pytest.raises(DreamerError) as caught:
        asyncio.run(kernel.syscalls["posts.create"](ctx, forged))
    assert caught.value.code == "invalid_argument" and "only the kernel offers grants" in caught.value.message
    assert feed(kernel.store, ada) == []
