"""What one model call asked and answered, kept for the training export (issue 20).

The gateway calls `record` after every call, answered or failed. Request and response
are kept in the shapes a trainer reads (OpenAI chat-completions style: `messages`,
`choices[0].message`, `finish_reason`), provider-neutral like the rest of kernel/llm.
A user who opted out of export (`users.export_opt_out`) has nothing kept here at all.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import insert, select

from dreamer.kernel.llm.types import ChatRequest, ChatResponse, Message, ToolCall
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ModelRequest, User
from dreamer.kernel.store.text import storable_text

# A long conversation's request can be large; past this the oldest messages are dropped
# (and counted), so one call never stores megabytes.
MAX_REQUEST_CHARS = 200_000

_INSERT = insert(ModelRequest)


def _tool_call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": call.raw_arguments or json.dumps(call.arguments)}}


def _message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": storable_text(message.content)}
    if message.tool_calls:
        out["tool_calls"] = [_tool_call(c) for c in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out


def request_body(request: ChatRequest, model: str) -> dict[str, Any]:
    messages = [_message(m) for m in request.messages]
    if request.system:
        messages.insert(0, {"role": "system", "content": storable_text(request.system)})
    body: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": request.max_tokens}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.tools:
        body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                           "parameters": t.parameters}} for t in request.tools]
    if request.tool_choice is not None:
        body["tool_choice"] = request.tool_choice
    if request.response_schema is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {"schema": request.response_schema}}
    dropped = 0
    system_first = 1 if request.system else 0
    while len(json.dumps(body, default=str)) > MAX_REQUEST_CHARS and len(body["messages"]) > system_first + 1:
        del body["messages"][system_first]
        dropped += 1
    if dropped:
        body["dreamer_dropped_messages"] = dropped
    return body


def response_body(response: ChatResponse) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": storable_text(response.text)}
    if response.tool_calls:
        message["tool_calls"] = [_tool_call(c) for c in response.tool_calls]
    return {
        "object": "chat.completion",
        "model": response.model,
        "choices": [{"index": 0, "message": message, "finish_reason": response.stop_reason}],
        "usage": response.usage.to_dict(),
    }


def record(
    store: Store, *, user_id: int, provider: str, model: str, request: dict[str, Any], response: dict[str, Any],
    latency_ms: float, status: str, usage: dict[str, Any] | None = None, finish_reason: str | None = None,
    invocation_id: str | None = None, turn_key: str | None = None, span_id: str | None = None,
    trace_id: str | None = None,
) -> None:
    with store.session() as s:
        if s.scalar(select(User.export_opt_out).where(User.id == user_id)):
            return  # opted out of export: their prompts are not kept for it
        s.connection().execute(_INSERT, [{
            "user_id": user_id, "invocation_id": invocation_id, "turn_key": turn_key, "span_id": span_id,
            "trace_id": trace_id, "provider": provider[:32], "model": model[:200], "request": request,
            "response": response, "latency_ms": latency_ms, "usage": usage,
            "finish_reason": finish_reason[:32] if finish_reason else None, "status": status,
            "at": datetime.now(timezone.utc),
        }])
