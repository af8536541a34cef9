"""Posts the kernel itself writes to a user's feed: a background or trigger run was refused
a permission, so nobody was there to see the error (only its log had it).

The notice carries a `grant` attachment, which the feed page turns into a one-click Grant
button, and the exact CLI command. Agents may not post a `grant` attachment themselves
(posts.create refuses it), so the button always comes from the kernel; and a grant can
only name a scope the agent's manifest declares, whoever asks for it.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import select

from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Post

RESERVED_ATTACHMENT_KEY = "grant"
# One notice per agent and scope a day: a check that runs every minute must not fill the feed.
REPEAT_AFTER = timedelta(hours=24)
RECENT_SCAN = 200


def grant_command(agent: str, scope: str) -> str:
    return f"dreamer grant {agent} {scope}"


def offers_grant(attachment: Any) -> bool:
    return isinstance(attachment, dict) and RESERVED_ATTACHMENT_KEY in attachment


def missing_grant_notice(
    store: Store, *, user_id: int, agent: str, scope: str, action: str, target: str, invocation_id: str
) -> bool:
    """Post "agent could not <action> <target>: grant <scope>" unless one was posted in the
    last day; return whether a post was written."""
    since = datetime.now(timezone.utc) - REPEAT_AFTER
    with store.session() as s:
        recent = s.scalars(
            select(Post).where(Post.user_id == user_id, Post.agent == agent, Post.created_at >= since)
            .order_by(Post.id.desc()).limit(RECENT_SCAN)
        )
        for post in recent:
            for a in post.attachments or []:
                if offers_grant(a) and a[RESERVED_ATTACHMENT_KEY].get("scope") == scope:
                    return False
        command = grant_command(agent, scope)
        verb = action.split(".")[-1]
        text = (
            f"{agent} tried to {verb} {target} while running on its own, and was stopped: you have not granted it "
            f"{scope}. Grant it here if you want it to, or run `{command}`."
        )
        s.add(Post(
            user_id=user_id, agent=agent, text=text[:2000], priority="urgent", invocation_id=invocation_id,
            attachments=[{RESERVED_ATTACHMENT_KEY: {"agent": agent, "scope": scope}, "command": command}],
        ))
    return True
