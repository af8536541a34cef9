"""Agent Lightning v1 records: one JSON line per rollout.

The shapes are Agent Lightning's own (microsoft/agent-lightning, agentlightning/schemas.py
at c632d8dd): each line is its `RolloutDetail` (`rollout` + `attempts`, as
GET /rollouts/{id} answers) plus `events`, the list GET /rollouts/{id}/events answers, one
`Event` per model call (`event_type` "model_request", data as `ModelRequestData`) and per
reward (`event_type` "reward", data as `RewardData`), in the order they happened.
tests/tracing/agentlightning_schema.json is derived from those models and checks it.
"""

from __future__ import annotations

from typing import Any

from dreamer.kernel.store.models import ModelRequest, Reward
from dreamer.kernel.tracing.export.redact import Redactor
from dreamer.kernel.tracing.export.rollouts import AttemptData, RolloutData, epoch


def reward_source(reward: Reward) -> str:
    """Who gave the reward: the column issue 20's feedback adds ("user"), else the agent's own."""
    return str(getattr(reward, "source", None) or "agent")


def model_request_data(row: ModelRequest, scrub: Redactor) -> dict[str, Any]:
    return {
        "model": row.model,
        "request": scrub.value(row.request),
        "response": scrub.value(row.response),
        "latency_ms": row.latency_ms,
        "status": row.status,
        "usage": row.usage,
        "finish_reason": row.finish_reason,
        "retry_count": 0,
        "dreamer": {"provider": row.provider, "invocation_id": row.invocation_id, "span_id": row.span_id},
    }


def reward_data(reward: Reward, scrub: Redactor) -> dict[str, Any]:
    return {
        "value": reward.value,
        "message": scrub.text(reward.note) if reward.note else None,
        "source": reward_source(reward),
        "reason": None,
        "dreamer": {"invocation_id": reward.invocation_id, "agent": reward.agent},
    }


def events(rollout: RolloutData, attempt: AttemptData, scrub: Redactor) -> list[dict[str, Any]]:
    found: list[tuple[float, int, dict[str, Any]]] = []
    for row in attempt.model_requests:
        at = epoch(row.at) or 0.0
        found.append((at, 0, {"event_type": "model_request", "data": model_request_data(row, scrub), "timestamp": at}))
    for reward in attempt.rewards:
        at = epoch(reward.created_at) or 0.0
        found.append((at, 1, {"event_type": "reward", "data": reward_data(reward, scrub), "timestamp": at}))
    found.sort(key=lambda item: (item[0], item[1]))
    return [{"rollout_id": rollout.rollout_id, "attempt_id": attempt.attempt_id, **event} for _, _, event in found]


def record(rollout: RolloutData, scrub: Redactor) -> dict[str, Any]:
    created, updated = epoch(rollout.created_at) or 0.0, epoch(rollout.updated_at) or 0.0
    return {
        "rollout": {
            "rollout_id": rollout.rollout_id,
            "input": scrub.value(rollout.input),
            "is_train": True,
            "config": {"timeout_seconds": 3600, "local": None, "k8s": None},
            "metadata": {
                "batch_idx": None,
                "sample_idx_in_batch": None,
                "dreamer": scrub.value({
                    "kind": rollout.kind, "user": rollout.user_name, "output": rollout.output, **rollout.extra,
                }),
            },
            "status": {
                "state": rollout.state,
                "k8s_job_name": None,
                "last_attempt_id": rollout.attempts[-1].attempt_id if rollout.attempts else None,
                "error_message": scrub.text(rollout.error) if rollout.error else None,
                "version": 1,
                "created_at": created,
                "updated_at": max(created, updated),
            },
        },
        "attempts": [a.attempt_id for a in rollout.attempts],
        "events": [e for a in rollout.attempts for e in events(rollout, a, scrub)],
    }
