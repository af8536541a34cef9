"""The user's feed: what their agents posted."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.kernel.posts.feed import clear
from dreamer.kernel.posts.feed import feed as read_feed

router = APIRouter(prefix="/v1", tags=["feed"])


@router.get("/feed")
def feed(k: KernelDep, who: PrincipalDep, limit: int = Query(50, ge=1, le=1000), agent: str | None = None) -> list[dict[str, Any]]:
    """The newest posts first: {"id", "agent", "text", "priority", "attachments", "invocation_id", "created_at"}."""
    return read_feed(k.store, who.user_id, limit, agent)


@router.delete("/feed")
def clear_feed(k: KernelDep, who: PrincipalDep, agent: str | None = None) -> dict[str, int]:
    """Delete the user's posts (only `agent`'s when given): {"deleted": n}."""
    return {"deleted": clear(k.store, who.user_id, agent)}
