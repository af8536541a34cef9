"""Triggers of the user's agents: list, fire now, pause/resume, schedule, webhook secret; shared input."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.triggers.inputs import InputBody, content_of, receivers

router = APIRouter(prefix="/v1", tags=["triggers"])


class TriggerChange(BaseModel):
    """Only the fields sent change. schedule "" goes back to the manifest's default; secret "" removes it."""

    model_config = ConfigDict(extra="forbid")
    paused: bool | None = None
    schedule: str | None = Field(default=None, max_length=200)
    secret: str | None = Field(default=None, max_length=200)


@router.get("/triggers")
def triggers(k: KernelDep, who: PrincipalDep, agent: str | None = None) -> list[dict[str, Any]]:
    return k.triggers.list(who.user_id, agent)


@router.post("/agents/{agent}/triggers/{name}/run", status_code=202)
async def run_trigger(agent: str, name: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Fire a trigger now (even a paused one), as a background invocation."""
    outcome = await k.triggers.fire_by_name(who, agent, name)
    return {"invocation_id": outcome.invocation_id, "status": outcome.status}


@router.patch("/agents/{agent}/triggers/{name}")
def change_trigger(agent: str, name: str, body: TriggerChange, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    changes = body.model_dump(exclude_unset=True)
    if not changes:
        raise DreamerError("invalid_argument", "send at least one of paused, schedule or secret")
    if changes.get("secret") and len(changes["secret"]) < 16:
        raise DreamerError("invalid_argument", "a webhook secret needs at least 16 characters")
    if "paused" in changes and changes["paused"] is None:
        raise DreamerError("invalid_argument", "paused is true or false")
    return k.triggers.update(who, agent, name, changes)


@router.post("/inputs", status_code=202)
async def share(body: InputBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Hand shared content to the agents whose input trigger accepts its content type."""
    content_type, payload = content_of(body)
    rows = receivers(k.store, who.user_id, body.agent, content_type)
    if not rows:
        where = f"{body.agent} has no input trigger" if body.agent else "none of your agents has an input trigger"
        raise DreamerError("not_found", f"{where} that accepts {content_type}; `dreamer triggers` lists what each accepts")
    routed: list[dict[str, Any]] = []
    for row in rows:
        try:
            outcome = await k.triggers.fire(row, payload)
        except DreamerError as exc:
            routed.append({"agent": row.agent, "trigger": row.name, "error": exc.to_dict()["error"]})
            continue
        routed.append({"agent": row.agent, "trigger": row.name, "invocation_id": outcome.invocation_id})
    return {"content_type": content_type, "routed": routed}
