"""Sidekick's memory of the user: list, add and delete facts."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.kernel.memory.facts import forget, memories, remember

router = APIRouter(prefix="/v1/memories", tags=["memory"])


class MemoryBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # The exact limit (1000 characters once whitespace is collapsed) is checked with one clear sentence.
    text: str = Field(max_length=10_000)


@router.get("")
def list_memories(k: KernelDep, who: PrincipalDep) -> list[dict[str, Any]]:
    """What Sidekick remembers about the user, oldest first, with where each fact came from."""
    return [f.to_dict() for f in memories(k.store, who.user_id)]


@router.post("", status_code=201)
def add_memory(body: MemoryBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Tell Sidekick a fact; `created` is false when it already remembered it."""
    added = remember(k.store, who.user_id, who.actor, body.text, source="user", via="api")
    return {**added.fact.to_dict(), "created": added.created}


@router.delete("/{memory_id}")
def delete_memory(k: KernelDep, who: PrincipalDep, memory_id: int = Path(ge=1, le=2**31 - 1)) -> dict[str, Any]:
    """Make Sidekick forget one fact."""
    return forget(k.store, who.user_id, who.actor, memory_id, via="api").to_dict()
