"""The same rollouts as OTLP/JSON spans with Agent Lightning's v0 attributes, for its span store.

Each line is one rollout as an OTLP `ExportTraceServiceRequest` in the OTLP/JSON encoding
(ids in hex, 64-bit integers as strings), so a line can be POSTed to any collector's
/v1/traces. Agent Lightning's conventions (agentlightning/semconv.py before its v1, commit
f0a77cfa): every span's resource carries `agentlightning.rollout_id`,
`agentlightning.attempt_id` and `agentlightning.span_sequence_id` (one resource per span,
as its LLM proxy writes them), invocations carry `agentlightning.operation.{name,input,
output}`, model calls `gen_ai.prompt.{i}.*` / `gen_ai.completion.0.*`, and each reward is an
`agentlightning.annotation` span with `agentlightning.reward.0.name` / `.value`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from dreamer.kernel.store.models import ModelRequest, Reward
from dreamer.kernel.tracing.export.agentlightning import reward_source
from dreamer.kernel.tracing.export.redact import Redactor
from dreamer.kernel.tracing.export.rollouts import AttemptData, RolloutData, epoch
from dreamer.kernel.tracing.semconv import SERVICE_NAME, TRACER_NAME

AGL_ANNOTATION = "agentlightning.annotation"
ROLLOUT_ID = "agentlightning.rollout_id"
ATTEMPT_ID = "agentlightning.attempt_id"
SEQUENCE_ID = "agentlightning.span_sequence_id"
TRACER = "agentlightning.tracer.name"
OPERATION_NAME = "agentlightning.operation.name"
OPERATION_INPUT = "agentlightning.operation.input"
OPERATION_OUTPUT = "agentlightning.operation.output"
REWARD_PREFIX = "agentlightning.reward"

_KINDS = {"internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5}
_STATUS = {"unset": 0, "ok": 1, "error": 2}
_MAX_INT = 2**63 - 1


def any_value(value: Any) -> dict[str, Any]:
    """An OTLP AnyValue in its JSON form."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int) and -_MAX_INT <= value <= _MAX_INT:
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    if value is None:
        return {"stringValue": ""}
    return {"stringValue": value if isinstance(value, str) else json.dumps(value, default=str)}


def attributes(items: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": any_value(v)} for k, v in items.items() if v is not None]


def _hex_id(*parts: str, width: int) -> str:
    """A stable id for a span the store does not have (a reward, a model call without its span)."""
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:width]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _stored(span: dict[str, Any], rollout: RolloutData, calls: dict[str, ModelRequest], scrub: Redactor) -> dict[str, Any]:
    attrs: dict[str, Any] = dict(scrub.value(span["attributes"] or {}))
    invocation = rollout.invocations.get(span["invocation_id"] or "")
    if invocation is not None and span["name"].startswith("invoke_agent") and attrs.get("dreamer.invocation_id") == invocation.id:
        attrs[OPERATION_NAME] = f"{invocation.agent}.{invocation.function}"
        attrs[OPERATION_INPUT] = _json(scrub.value(invocation.args))
        if invocation.result is not None:
            attrs[OPERATION_OUTPUT] = _json(scrub.value(invocation.result))
    call = calls.get(span["span_id"])
    if call is not None:
        attrs.update(_llm_attributes(call, scrub))
    return {
        "traceId": span["trace_id"],
        "spanId": span["span_id"],
        "parentSpanId": span["parent_span_id"] or "",
        "name": span["name"],
        "kind": _KINDS.get(span["kind"], 1),
        "startTimeUnixNano": str(span["start_ns"]),
        "endTimeUnixNano": str(span["end_ns"]),
        "attributes": attributes(attrs),
        "status": {"code": _STATUS.get(span["status"], 0),
                   "message": str(attrs.get("otel.status_description", "")) if span["status"] == "error" else ""},
    }


def _llm_attributes(call: ModelRequest, scrub: Redactor) -> dict[str, Any]:
    """The prompt and completion, flattened the way Agent Lightning's adapters read LLM spans."""
    out: dict[str, Any] = {"gen_ai.request.model": call.model, "gen_ai.system": call.provider}
    request = scrub.value(call.request)
    for i, message in enumerate(request.get("messages") or []):
        if isinstance(message, dict):
            out[f"gen_ai.prompt.{i}.role"] = str(message.get("role", ""))
            out[f"gen_ai.prompt.{i}.content"] = str(message.get("content", ""))
    choices = (scrub.value(call.response).get("choices") or [{}]) if isinstance(call.response, dict) else [{}]
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if isinstance(message, dict):
        out["gen_ai.completion.0.role"] = str(message.get("role", "assistant"))
        out["gen_ai.completion.0.content"] = str(message.get("content", ""))
        if message.get("tool_calls"):
            out["gen_ai.completion.0.tool_calls"] = _json(message["tool_calls"])
    if call.finish_reason:
        out["gen_ai.response.finish_reasons"] = [call.finish_reason]
    usage = call.usage or {}
    out["gen_ai.usage.input_tokens"] = usage.get("input_tokens")
    out["gen_ai.usage.output_tokens"] = usage.get("output_tokens")
    out["dreamer.llm.latency_ms"] = call.latency_ms
    return out


def _call_span(call: ModelRequest, rollout: RolloutData, attempt: AttemptData, trace: str, scrub: Redactor) -> dict[str, Any]:
    """A model call whose span the store does not hold (tracing was off): made from its record."""
    end = int((epoch(call.at) or 0.0) * 1e9)
    start = end - int(call.latency_ms * 1e6)
    return {
        "traceId": trace, "spanId": call.span_id or _hex_id(rollout.rollout_id, "llm", str(call.id), width=16),
        "parentSpanId": "", "name": f"chat {call.model}", "kind": _KINDS["client"],
        "startTimeUnixNano": str(max(start, 0)), "endTimeUnixNano": str(end),
        "attributes": attributes({"gen_ai.operation.name": "chat", **_llm_attributes(call, scrub)}),
        "status": {"code": _STATUS["error"] if call.status == "error" else _STATUS["ok"], "message": ""},
    }


def _reward_span(reward: Reward, rollout: RolloutData, trace: str, scrub: Redactor) -> dict[str, Any]:
    at = int((epoch(reward.created_at) or 0.0) * 1e9)
    attrs = {
        f"{REWARD_PREFIX}.0.name": reward_source(reward),
        f"{REWARD_PREFIX}.0.value": float(reward.value),
        "agentlightning.message.body": scrub.text(reward.note) if reward.note else None,
        "dreamer.invocation_id": reward.invocation_id,
        "dreamer.reward.source": reward_source(reward),
    }
    return {
        "traceId": trace, "spanId": _hex_id(rollout.rollout_id, "reward", str(reward.id), width=16),
        "parentSpanId": "", "name": AGL_ANNOTATION, "kind": _KINDS["internal"],
        "startTimeUnixNano": str(at), "endTimeUnixNano": str(at),
        "attributes": attributes(attrs), "status": {"code": _STATUS["ok"], "message": ""},
    }


def record(rollout: RolloutData, scrub: Redactor) -> dict[str, Any]:
    resource_spans: list[dict[str, Any]] = []
    for attempt in rollout.attempts:
        calls = {c.span_id: c for c in attempt.model_requests if c.span_id}
        spans = [_stored(span, rollout, calls, scrub) for span in attempt.spans]
        held = {s["spanId"] for s in spans}
        trace = spans[0]["traceId"] if spans else _hex_id(rollout.rollout_id, attempt.attempt_id, width=32)
        spans.extend(_call_span(c, rollout, attempt, trace, scrub) for c in attempt.model_requests if c.span_id not in held)
        spans.extend(_reward_span(r, rollout, trace, scrub) for r in attempt.rewards)
        spans.sort(key=lambda s: (int(s["startTimeUnixNano"]), s["spanId"]))
        for sequence, span in enumerate(spans):
            resource = attributes({
                "service.name": SERVICE_NAME, ROLLOUT_ID: rollout.rollout_id, ATTEMPT_ID: attempt.attempt_id,
                SEQUENCE_ID: sequence, TRACER: TRACER_NAME,
            })
            resource_spans.append({
                "resource": {"attributes": resource},
                "scopeSpans": [{"scope": {"name": TRACER_NAME}, "spans": [span]}],
            })
    return {"resourceSpans": resource_spans}
