"""Anthropic's Messages API through the `anthropic` package.

Prompt caching: the system prompt and the tool definitions are the part of a
request that repeats between calls (the planner sends the same tools every
turn), so both carry a cache breakpoint; the conversation itself does not,
because a one-off prompt would pay the cache-write premium for nothing.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic

from dreamer.kernel.llm.config import LLMConfig
from dreamer.kernel.llm.errors import translate, where
from dreamer.kernel.llm.providers.base import offered_tools, tool_call
from dreamer.kernel.llm.types import (
    ChatRequest,
    ChatResponse,
    Done,
    Message,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    Usage,
)

# The tool a structured answer is forced through; its input is the answer.
RESPOND_TOOL = "respond_with_json"
CACHE = {"type": "ephemeral"}
_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.place = where(config.base_url, "api.anthropic.com")
        self._client: anthropic.AsyncAnthropic | None = None

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        # Made on first use, inside the event loop that will use it.
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(
                api_key=self.config.api_key,
                base_url=self.config.base_url,
                timeout=self.config.timeout_s,
                max_retries=self.config.max_retries,
                # The gateway makes its own GenAI span; the library's would duplicate it.
                open_telemetry=False,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def complete(self, request: ChatRequest, model: str) -> ChatResponse:
        try:
            message = await self.client.messages.create(**body(request, model))
            return self._response(request, message)
        except Exception as exc:  # noqa: BLE001 - any failure of the client library becomes one DreamerError
            raise self._error(exc, model) from None

    async def stream(self, request: ChatRequest, model: str) -> AsyncIterator[StreamEvent]:
        offered = offered_tools(request)
        texts: list[str] = []
        calls: list[ToolCall] = []
        usage = Usage()
        stop: StopReason = "other"
        answered_model = model
        blocks: dict[int, dict[str, Any]] = {}  # index -> {"type", "id", "name", "json": [...]}
        try:
            events = await self.client.messages.create(**body(request, model), stream=True)
            async for event in events:
                kind = getattr(event, "type", None)
                if kind == "message_start":
                    answered_model = event.message.model or model
                    usage = _usage(event.message.usage, usage)
                elif kind == "content_block_start":
                    block = event.content_block
                    blocks[event.index] = {"type": block.type, "id": getattr(block, "id", ""),
                                           "name": getattr(block, "name", ""), "json": []}
                elif kind == "content_block_delta":
                    delta, open_block = event.delta, blocks.get(event.index, {})
                    if delta.type == "text_delta":
                        texts.append(delta.text)
                        yield TextDelta(delta.text)
                    elif delta.type == "input_json_delta":
                        open_block.setdefault("json", []).append(delta.partial_json)
                        if open_block.get("name") == RESPOND_TOOL and request.response_schema is not None:
                            texts.append(delta.partial_json)
                            yield TextDelta(delta.partial_json)
                elif kind == "content_block_stop":
                    done = blocks.pop(event.index, None)
                    if done and done["type"] == "tool_use" and not _is_answer(request, done["name"]):
                        call = tool_call(done["id"], done["name"], "".join(done["json"]), offered)
                        calls.append(call)
                        yield ToolCallEvent(call)
                elif kind == "message_delta":
                    stop = _STOP.get(event.delta.stop_reason or "", "other")
                    usage = _usage(event.usage, usage)
        except Exception as exc:  # noqa: BLE001 - any failure of the client library becomes one DreamerError
            raise self._error(exc, model) from None
        if request.response_schema is not None and stop == "tool_use" and not calls:
            stop = "end_turn"
        yield Done(ChatResponse("".join(texts), calls, stop, usage, answered_model, self.name))

    def _response(self, request: ChatRequest, message: Any) -> ChatResponse:
        offered = offered_tools(request)
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in message.content or []:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                if _is_answer(request, block.name):
                    texts.append(block.input if isinstance(block.input, str) else json.dumps(block.input))
                else:
                    calls.append(tool_call(block.id, block.name, block.input, offered))
        stop = _STOP.get(message.stop_reason or "", "other")
        if request.response_schema is not None and stop == "tool_use" and not calls:
            stop = "end_turn"
        return ChatResponse("".join(texts), calls, stop, _usage(message.usage, Usage()), message.model or "", self.name)

    def _error(self, exc: Exception, model: str) -> Exception:
        return translate(exc, library=anthropic, place=self.place, model=model,
                         timeout=self.config.timeout_s, key_source=self.config.api_key_source)


def body(request: ChatRequest, model: str) -> dict[str, Any]:
    """The keyword arguments of `messages.create` for `request`."""
    kwargs: dict[str, Any] = {"model": model, "max_tokens": request.max_tokens, "messages": messages(request.messages)}
    if request.system:
        kwargs["system"] = [{"type": "text", "text": request.system, "cache_control": CACHE}]
    tools = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools]
    if request.response_schema is not None:
        tools.append({
            "name": RESPOND_TOOL,
            "description": "Give your answer as this tool's input; it must match the input schema.",
            "input_schema": request.response_schema,
        })
        kwargs["tool_choice"] = {"type": "tool", "name": RESPOND_TOOL}
    elif request.tool_choice == "required":
        kwargs["tool_choice"] = {"type": "any"}
    elif request.tool_choice:
        kwargs["tool_choice"] = {"type": "tool", "name": request.tool_choice}
    if tools:
        tools[-1] = {**tools[-1], "cache_control": CACHE}  # caches every tool up to here
        kwargs["tools"] = tools
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    return kwargs


def messages(history: list[Message]) -> list[dict[str, Any]]:
    """Neutral turns as Anthropic messages: tool results travel in a user turn, and
    consecutive turns of one role merge (the API wants roles to alternate)."""
    out: list[dict[str, Any]] = []
    for turn in history:
        if turn.role == "tool":
            role = "user"
            blocks: list[dict[str, Any]] = [{
                "type": "tool_result", "tool_use_id": turn.tool_call_id or "",
                "content": turn.content, "is_error": turn.is_error,
            }]
        elif turn.role == "assistant":
            role = "assistant"
            blocks = [{"type": "text", "text": turn.content}] if turn.content else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in turn.tool_calls]
        else:
            role = "user"
            blocks = [{"type": "text", "text": turn.content}] if turn.content else []
        if not blocks:
            continue  # the API refuses empty turns
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _is_answer(request: ChatRequest, name: str) -> bool:
    return request.response_schema is not None and name == RESPOND_TOOL


def _usage(raw: Any, before: Usage) -> Usage:
    """Anthropic reports input at message_start and cumulative output at message_delta;
    a later report replaces the fields it carries."""
    if raw is None:
        return before

    def pick(name: str, old: int) -> int:
        value = getattr(raw, name, None)
        return int(value) if isinstance(value, int) else old

    return Usage(
        input_tokens=pick("input_tokens", before.input_tokens),
        output_tokens=pick("output_tokens", before.output_tokens),
        cache_read_tokens=pick("cache_read_input_tokens", before.cache_read_tokens),
        cache_write_tokens=pick("cache_creation_input_tokens", before.cache_write_tokens),
    )
