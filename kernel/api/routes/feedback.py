"""Thumbs up/down on a Sidekick answer or an invocation: POST /v1/feedback."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.kernel.feedback.ratings import rate
from dreamer.kernel.learned.from_ratings import learn_from_rating

router = APIRouter(prefix="/v1", tags=["feedback"])


class FeedbackBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: str = Field(max_length=80)  # "turn_<id>" (a Sidekick answer) or an invocation id
    rating: Literal["up", "down"]
    note: str | None = Field(default=None, max_length=2000)  # the exact limit is checked with one sentence


@router.post("/feedback")
def feedback(body: FeedbackBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Rate one of your Sidekick answers or invocations. Kept as a reward (source "user")
    on it and on the invocations the answer made; a rating of an answer also teaches
    Sidekick (down: not that function for those words again) unless you opted out."""
    rated = rate(k.store, who.user_id, body.target, body.rating, body.note)
    learned = learn_from_rating(k.store, who.user_id, rated)
    return {**rated.to_dict(), "learned": learned}
