"""What Sidekick learned from the user's corrections: list, delete, promote, opt out."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.api.deps import AdminDep, KernelDep, PrincipalDep
from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.learned import examples
from dreamer.kernel.store.models import User

router = APIRouter(prefix="/v1/learned", tags=["learned"])

ExampleId = Path(ge=1, le=2**31 - 1)


class SettingsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    learning: bool


class PromoteBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    everyone: bool = True


@router.get("")
def list_learned(k: KernelDep, who: PrincipalDep, all: bool = Query(False)) -> dict[str, Any]:
    """Your examples (prefer: route these words there; avoid: never there) and those the
    administrator promoted to everyone; `all` (administrator only) lists every user's."""
    if all and not _is_admin(k, who):
        raise DreamerError("forbidden", "only the installation's administrator may list every user's examples")
    found = examples.list_learned(k.store, who.user_id, all_users=all)
    return {"learning": examples.learning_enabled(k.store, who.user_id), "examples": [x.to_dict() for x in found]}


@router.delete("/{example_id}")
def delete_learned(k: KernelDep, who: PrincipalDep, example_id: int = ExampleId) -> dict[str, Any]:
    """Forget one of your examples (the administrator may delete anyone's)."""
    if not examples.forget(k.store, who.user_id, example_id, admin=_is_admin(k, who)):
        raise DreamerError("not_found", f"no learned example {example_id}")
    return {"id": example_id, "deleted": True}


@router.post("/{example_id}/promote")
def promote(body: PromoteBody, k: KernelDep, who: AdminDep, example_id: int = ExampleId) -> dict[str, Any]:
    """Administrator: let this example route every user's messages (`everyone: false` takes it back)."""
    found = examples.promote(k.store, example_id, body.everyone)
    if found is None:
        raise DreamerError("not_found", f"no learned example {example_id}")
    with k.store.session() as s:
        audit(s, user_id=who.user_id, actor=who.actor, action="learned.promote" if body.everyone else "learned.unpromote",
              target=f"learned:{example_id}", decision="allow",
              detail={"agent": found.agent, "function": found.function, "owner": found.user})
    return found.to_dict()


@router.get("/settings")
def get_settings(k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    return {"learning": examples.learning_enabled(k.store, who.user_id)}


@router.put("/settings")
def put_settings(body: SettingsBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Opt out of (or back into) learning: off, Sidekick keeps nothing new from your corrections."""
    examples.set_learning(k.store, who.user_id, body.learning)
    return {"learning": body.learning}


def _is_admin(k: Any, who: Any) -> bool:
    with k.store.session() as s:
        user = s.get(User, who.user_id)
        return bool(user is not None and user.is_admin) or who.via is not None
