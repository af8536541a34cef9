"""(prompt, response, reward, metadata) triplets for prompt optimisation, one JSON line each.

The shape is Agent Lightning's `Triplet` (agentlightning/types/core.py before its v1, commit
f0a77cfa). One triplet per model call; a rollout that made none (the offline planner, an
agent that uses no model) is one triplet of what it was asked and what it answered.

A rollout's reward is the user's latest judgement when there is one (thumbs up/down), else
the latest an agent gave (`ctx.emit_reward`), else none; every reward is in the metadata.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dreamer.kernel.store.models import Reward
from dreamer.kernel.tracing.export.agentlightning import reward_source
from dreamer.kernel.tracing.export.redact import Redactor
from dreamer.kernel.tracing.export.rollouts import RolloutData


def rollout_reward(rewards: list[Reward]) -> float | None:
    if not rewards:
        return None
    by_user = [r for r in rewards if reward_source(r) == "user"]
    chosen = max(by_user or rewards, key=lambda r: (r.created_at, r.id))
    return float(chosen.value)


def records(rollout: RolloutData, scrub: Redactor) -> Iterator[dict[str, Any]]:
    rewards = rollout.rewards
    reward = rollout_reward(rewards)
    common = {
        "rollout_id": rollout.rollout_id,
        "kind": rollout.kind,
        "user": rollout.user_name,
        "rewards": [{"value": r.value, "source": reward_source(r), "message": scrub.text(r.note) if r.note else None}
                    for r in rewards],
    }
    sequence = 0
    for attempt in rollout.attempts:
        for call in attempt.model_requests:
            response = call.response if isinstance(call.response, dict) else {}
            choices = response.get("choices") or [{}]
            yield {
                "prompt": scrub.value(call.request.get("messages") if isinstance(call.request, dict) else call.request),
                "response": scrub.value(choices[0].get("message") if isinstance(choices[0], dict) else response),
                "reward": reward,
                "metadata": {**common, "attempt_id": attempt.attempt_id, "sequence_id": sequence, "model": call.model,
                             "invocation_id": call.invocation_id, "finish_reason": call.finish_reason,
                             "status": call.status},
            }
            sequence += 1
    if sequence == 0:
        yield {
            "prompt": scrub.value(rollout.input),
            "response": scrub.value(rollout.output),
            "reward": reward,
            "metadata": {**common, "attempt_id": rollout.attempts[-1].attempt_id if rollout.attempts else None,
                         "sequence_id": 0, "model": None, "status": rollout.state},
        }
