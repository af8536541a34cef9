"""Any OpenAI-compatible Chat Completions endpoint through the `openai` package:
OpenAI itself, Ollama, vLLM, llama.cpp's server, and the like (`base_url`)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import openai

from dreamer.kernel.llm.config import OPENAI_HOST, LLMConfig
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

log = logging.getLogger("dreamer.kernel.llm")

_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAIProvider:
    name = "openai"

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.place = where(config.base_url, OPENAI_HOST)
        host = urlsplit(config.base_url).hostname if config.base_url else OPENAI_HOST
        # OpenAI's newer models refuse `max_tokens`; many compatible servers only know it.
        self.max_tokens_field = "max_completion_tokens" if host == OPENAI_HOST else "max_tokens"
        # Whether the server takes `response_format: json_schema`; set to False the
        # first time it refuses one, after which the schema travels as instructions only.
        self.native_schema = True
        self._client: openai.AsyncOpenAI | None = None

    @property
    def client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            self._client = openai.AsyncOpenAI(
                api_key=self.config.api_key,
                base_url=self.config.base_url,
                timeout=self.config.timeout_s,
                max_retries=self.config.max_retries,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def complete(self, request: ChatRequest, model: str) -> ChatResponse:
        try:
            completion = await self._create(request, model, stream=False)
            return self._response(request, completion)
        except Exception as exc:
            raise self._error(exc, model) from None

    async def stream(self, request: ChatRequest, model: str) -> AsyncIterator[StreamEvent]:
        offered = offered_tools(request)
        texts: list[str] = []
        pending: dict[int, dict[str, Any]] = {}  # index -> {"id", "name", "args": [...]}
        usage = Usage()
        stop: StopReason = "other"
        answered_model = model
        try:
            chunks = await self._create(request, model, stream=True)
            async for chunk in chunks:
                answered_model = getattr(chunk, "model", None) or answered_model
                if getattr(chunk, "usage", None) is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None and delta.content:
                        texts.append(delta.content)
                        yield TextDelta(delta.content)
                    for part in (delta.tool_calls if delta is not None else None) or []:
                        slot = pending.setdefault(part.index, {"id": None, "name": "", "args": []})
                        slot["id"] = part.id or slot["id"]
                        if part.function is not None:
                            slot["name"] = part.function.name or slot["name"]
                            if part.function.arguments:
                                slot["args"].append(part.function.arguments)
                    if choice.finish_reason:
                        stop = _STOP.get(choice.finish_reason, "other")
        except Exception as exc:
            raise self._error(exc, model) from None
        calls: list[ToolCall] = []
        for index in sorted(pending):
            slot = pending[index]
            call = tool_call(slot["id"] or f"call_{index}", slot["name"], "".join(slot["args"]), offered)
            calls.append(call)
            yield ToolCallEvent(call)
        yield Done(ChatResponse("".join(texts), calls, stop, usage, answered_model, self.name))

    async def _create(self, request: ChatRequest, model: str, *, stream: bool) -> Any:
        kwargs = self.body(request, model)
        if stream:
            kwargs |= {"stream": True, "stream_options": {"include_usage": True}}
        try:
            return await self.client.chat.completions.create(**kwargs)
        except openai.APIStatusError as exc:
            if "response_format" not in kwargs or exc.status_code not in (400, 422):
                raise
            # The server does not know json_schema answers: ask in words instead
            # (the structured helper has put the schema in the system prompt).
            log.info("%s refused response_format json_schema (%s); using instructions", self.place, exc.status_code)
            self.native_schema = False
            return await self.client.chat.completions.create(**self.body(request, model) | (
                {"stream": True, "stream_options": {"include_usage": True}} if stream else {}))

    def body(self, request: ChatRequest, model: str) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages(request.system, request.messages),
            self.max_tokens_field: request.max_tokens,
        }
        if request.tools:
            kwargs["tools"] = [
                {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
                for t in request.tools
            ]
            if request.tool_choice == "required":
                kwargs["tool_choice"] = "required"
            elif request.tool_choice:
                kwargs["tool_choice"] = {"type": "function", "function": {"name": request.tool_choice}}
        if request.response_schema is not None and self.native_schema:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": request.response_schema},
            }
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        return kwargs

    def _response(self, request: ChatRequest, completion: Any) -> ChatResponse:
        if not completion.choices:
            raise ValueError("the answer has no choices")
        choice = completion.choices[0]
        message = choice.message
        offered = offered_tools(request)
        calls = [
            tool_call(c.id or f"call_{i}", c.function.name, c.function.arguments, offered)
            for i, c in enumerate(message.tool_calls or [])
            if getattr(c, "function", None) is not None
        ]
        stop = _STOP.get(choice.finish_reason or "", "other")
        usage = _usage(completion.usage) if completion.usage is not None else Usage()
        return ChatResponse(message.content or "", calls, stop, usage, completion.model or "", self.name)

    def _error(self, exc: Exception, model: str) -> Exception:
        return translate(exc, library=openai, place=self.place, model=model,
                         timeout=self.config.timeout_s, key_source=self.config.api_key_source)


def messages(system: str | None, history: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for turn in history:
        if turn.role == "tool":
            # Chat Completions has no error flag on a tool result; say it in the text.
            content = f"Error: {turn.content}" if turn.is_error else turn.content
            out.append({"role": "tool", "tool_call_id": turn.tool_call_id or "", "content": content})
        elif turn.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": turn.content or None}
            if turn.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.name, "arguments": c.raw_arguments if c.error and c.raw_arguments
                                  else _json(c.arguments)}}
                    for c in turn.tool_calls
                ]
            out.append(entry)
        else:
            out.append({"role": "user", "content": turn.content})
    return out


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _usage(raw: Any) -> Usage:
    prompt = int(getattr(raw, "prompt_tokens", 0) or 0)
    details = getattr(raw, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        cache_read_tokens=cached,
    )
