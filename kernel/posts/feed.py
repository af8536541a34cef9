"""Posts in a user's feed: written by the `posts.create` syscall, read by GET /v1/feed.

posts.create params {"text": str, "priority": "normal" | "urgent", "attachments": [JSON]},
grant `notify`. Result {"id": int}. Text and attachments are capped so a chatty or
hostile agent cannot fill the kernel's store one post at a time.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import delete, func, select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.posts.notices import offers_grant
from dreamer.kernel.store.models import Post
from dreamer.kernel.users.quotas import exceeded

if TYPE_CHECKING:
    from dreamer.kernel.invocations.syscalls import SyscallContext

MAX_TEXT_CHARS = 10_000
MAX_ATTACHMENTS = 20
MAX_ATTACHMENT_BYTES = 64 * 1024  # all attachments of one post, as JSON


class _Create(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    priority: Literal["normal", "urgent"] = "normal"
    attachments: list[Any] = Field(default_factory=list, max_length=MAX_ATTACHMENTS)


def view(post: Post) -> dict[str, Any]:
    return {
        "id": post.id, "agent": post.agent, "text": post.text, "priority": post.priority,
        "attachments": post.attachments, "invocation_id": post.invocation_id,
        "created_at": post.created_at.isoformat(),
    }


def feed(store: Store, user_id: int, limit: int = 50, agent: str | None = None) -> list[dict[str, Any]]:
    """The newest posts first."""
    with store.session() as s:
        q = select(Post).where(Post.user_id == user_id)
        if agent:
            q = q.where(Post.agent == agent)
        return [view(p) for p in s.scalars(q.order_by(Post.id.desc()).limit(limit))]


def latest_id(store: Store, user_id: int) -> int:
    """The id of the user's newest post, 0 when they have none: a stream from now starts after it."""
    with store.session() as s:
        return int(s.scalar(select(func.max(Post.id)).where(Post.user_id == user_id)) or 0)


def posts_after(store: Store, user_id: int, after: int, limit: int) -> list[dict[str, Any]]:
    """The user's posts after `after`, oldest first, at most `limit`."""
    with store.session() as s:
        return [view(p) for p in s.scalars(
            select(Post).where(Post.user_id == user_id, Post.id > after).order_by(Post.id).limit(limit))]


def clear(store: Store, user_id: int, agent: str | None = None) -> int:
    """Delete the user's posts (of one agent, or all); how many went. Frees feed quota."""
    with store.session() as s:
        q = delete(Post).where(Post.user_id == user_id)
        if agent:
            q = q.where(Post.agent == agent)
        return int(getattr(s.execute(q), "rowcount", 0) or 0)  # a DELETE's CursorResult


async def posts_create(ctx: "SyscallContext", params: dict[str, Any]) -> dict[str, Any]:
    try:
        body = _Create.model_validate(params)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DreamerError("invalid_argument", f"ctx.post: {where + ': ' if where else ''}{first['msg']}") from None
    if not body.text.strip():
        raise DreamerError("invalid_argument", "ctx.post: the text is empty; a post needs something to say")
    size = len(json.dumps(body.attachments, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > MAX_ATTACHMENT_BYTES:
        raise DreamerError(
            "payload_too_large", f"ctx.post: the attachments are {size} bytes as JSON; at most {MAX_ATTACHMENT_BYTES} are kept"
        )
    if any(offers_grant(a) for a in body.attachments):
        raise DreamerError("invalid_argument", "ctx.post: an attachment may not carry 'grant'; only the kernel offers grants")
    ctx.require("notify", action="posts.create", target="your feed", detail={"priority": body.priority})
    quota = ctx.invoker.settings.quotas.feed_posts
    with ctx.invoker.store.session() as s:
        held = s.scalar(select(func.count()).select_from(Post).where(Post.user_id == ctx.who.user_id)) or 0
        if held >= quota:
            raise exceeded("feed_posts", held + 1, quota,
                           "delete old posts with `dreamer feed --clear` or ask the administrator to raise DREAMER_QUOTA_FEED_POSTS")
        post = Post(
            user_id=ctx.who.user_id, agent=ctx.agent, text=body.text, priority=body.priority,
            attachments=body.attachments, invocation_id=ctx.invocation_id,
        )
        s.add(post)
        s.flush()
        made = post.id
    ctx.invoker.feed.posted(ctx.who.user_id)  # committed: the user's open feed streams can read it
    return {"id": made}
