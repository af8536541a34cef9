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
        # How this server takes a schema for the answer. OpenAI, vLLM and Ollama know
        # `json_schema`; llama-cpp-python's server refuses it (422) and takes
        # `json_object` with a `schema` instead (a grammar-constrained answer). Each
        # refusal moves one step down this list, the last being instructions only.
        self.schema_formats: list[str] = ["json_schema", "json_object"]
        # Whether the server can stream an answer to a request with tools. llama-cpp-python's
        # function-calling chat format cannot ("Automatic streaming tool choice is not
        # supported"); after the first such failure those requests are asked for whole and
        # their text is passed on as one delta.
        self.stream_tools = True
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
        except Exception as exc:  # noqa: BLE001 - any failure of the client library becomes one DreamerError
            raise self._error(exc, model) from None

    async def stream(self, request: ChatRequest, model: str) -> AsyncIterator[StreamEvent]:
        if request.tools and not self.stream_tools:
            async for event in self._whole(request, model):
                yield event
            return
        offered = offered_tools(request)
        texts: list[str] = []
        pending: dict[int, dict[str, Any]] = {}  # index -> {"id", "name", "args": [...]}
        usage: Usage | None = None
        stop: StopReason | None = None
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
        except Exception as exc:  # noqa: BLE001 - any failure of the client library becomes one DreamerError
            if request.tools and not texts and not pending and _cannot_stream_tools(exc):
                log.info("%s cannot stream an answer with tools (%s); asking for whole answers", self.place, exc)
                self.stream_tools = False
                async for event in self._whole(request, model):
                    yield event
                return
            raise self._error(exc, model) from None
        if stop is None and not texts and not pending:
            # A stream that ended before any choice: llama-cpp-python's server fails this way
            # (an HTTP 200 stream that stops) when it cannot stream tool calls. Not an answer.
            if request.tools and self.stream_tools:
                log.info("%s ended a stream with tools without an answer; asking for whole answers", self.place)
                self.stream_tools = False
                async for event in self._whole(request, model):
                    yield event
                return
            raise self._error(ValueError("the stream ended without an answer"), model)
        if usage is None:
            # Some servers (llama-cpp-python's) ignore stream_options.include_usage. A call
            # counted as free would let streams get round the budget, so it is estimated
            # (about four characters a token) and the log says so.
            usage = _estimated(request, texts, pending)
            log.info("%s sent no token counts with a stream; recorded an estimate (%d in, %d out)",
                     self.place, usage.input_tokens, usage.output_tokens)
        calls: list[ToolCall] = []
        for index in sorted(pending):
            slot = pending[index]
            call = tool_call(slot["id"] or f"call_{index}", slot["name"], "".join(slot["args"]), offered)
            calls.append(call)
            yield ToolCallEvent(call)
        yield Done(ChatResponse("".join(texts), calls, stop or "other", usage, answered_model, self.name))

    async def _whole(self, request: ChatRequest, model: str) -> AsyncIterator[StreamEvent]:
        """A stream made of one whole answer: its text as one delta, then its calls."""
        response = await self.complete(request, model)
        if response.text:
            yield TextDelta(response.text)
        for call in response.tool_calls:
            yield ToolCallEvent(call)
        yield Done(response)

    async def _create(self, request: ChatRequest, model: str, *, stream: bool) -> Any:
        extra = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
        while True:
            kwargs = self.body(request, model) | extra
            try:
                return await self.client.chat.completions.create(**kwargs)
            except openai.APIStatusError as exc:
                if "response_format" not in kwargs or not _refuses_format(exc):
                    raise
                # The server does not know this way of asking for a schema: try the next
                # (the structured helper has also put the schema in the system prompt).
                refused = self.schema_formats.pop(0)
                log.info("%s refused response_format %s (%s); trying %s", self.place, refused, exc.status_code,
                         self.schema_formats[0] if self.schema_formats else "instructions only")

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
            else:
                # OpenAI's default when tools are given, said out loud: llama-cpp-python's
                # server reads a missing tool_choice as "none" and never calls a tool.
                kwargs["tool_choice"] = "auto"
        if request.response_schema is not None and self.schema_formats:
            if self.schema_formats[0] == "json_schema":
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": request.response_schema},
                }
            else:
                kwargs["response_format"] = {"type": "json_object", "schema": request.response_schema}
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
            # Content is always a string, "" beside tool calls: llama-cpp-python's server refuses
            # null (its request schema) and fails on an absent one (its chat template reads it).
            entry: dict[str, Any] = {"role": "assistant", "content": turn.content or ""}
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


def _refuses_format(exc: openai.APIStatusError) -> bool:
    """The server refused the response_format it was sent: 400/422 from most servers;
    llama-cpp-python's answers 500 with its validation error naming response_format."""
    if exc.status_code in (400, 422):
        return True
    return exc.status_code >= 500 and "response_format" in str(getattr(exc, "message", "") or exc)


def _estimated(request: ChatRequest, texts: list[str], pending: dict[int, dict[str, Any]]) -> Usage:
    asked = sum(len(m.content) + sum(len(_json(c.arguments)) for c in m.tool_calls) for m in request.messages)
    asked += len(request.system or "") + sum(len(t.description) + len(_json(t.parameters)) for t in request.tools)
    said = sum(len(t) for t in texts) + sum(len(s["name"]) + sum(len(a) for a in s["args"]) for s in pending.values())
    return Usage(input_tokens=max(1, asked // 4), output_tokens=max(1, said // 4) if said else 0)


def _cannot_stream_tools(exc: Exception) -> bool:
    """A server error that says it cannot stream an answer to a request with tools."""
    text = str(getattr(exc, "message", "") or exc).lower()
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500 and "stream" in text


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
