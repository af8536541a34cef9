"""The `llm.complete` syscall: an agent asks the model, under the `llm` grant.

params: {"prompt": str} or {"messages": [{"role": "user"|"assistant", "content": str}, ...]},
optional "system", "schema" (a JSON schema: the answer is validated JSON),
"variant" (fast | standard | powerful), "max_tokens" (capped by the configuration),
"temperature". Result: {"text", "data" (with a schema), "model", "usage", "stop_reason"}.

Tool use (an agent's own tool loop, e.g. the coder agent's): "tools" is a list of
{"name", "description", "parameters" (JSON schema)}; an assistant turn may carry
"tool_calls" [{"id", "name", "arguments"}] and a {"role": "tool", "tool_call_id",
"content", "is_error"} turn answers one. The result then has "tool_calls" too. The
tools run in the agent's own sandbox: the kernel only relays the model's answer.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm.types import ChatRequest, Message, ToolCall, ToolSpec

if TYPE_CHECKING:
    from dreamer.kernel.invocations.syscalls import SyscallContext
    from dreamer.kernel.llm.gateway import Gateway

MAX_TURNS = 200


MAX_TOOLS = 64


class _CallIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=64)
    arguments: dict[str, Any] = Field(default_factory=dict)


class _Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[_CallIn] = Field(default_factory=list, max_length=MAX_TOOLS)
    tool_call_id: str | None = Field(default=None, min_length=1, max_length=200)
    is_error: bool = False

    @model_validator(mode="after")
    def _shape(self) -> "_Turn":
        if self.role == "tool" and self.tool_call_id is None:
            raise ValueError("a tool turn needs the tool_call_id it answers")
        if self.role != "tool" and self.tool_call_id is not None:
            raise ValueError("only a tool turn has a tool_call_id")
        if self.role != "assistant" and self.tool_calls:
            raise ValueError("only an assistant turn carries tool_calls")
        if self.role == "user" and not self.content:
            raise ValueError("a user turn needs content")
        return self

    def message(self) -> Message:
        if self.role == "tool":
            return Message.tool_result(self.tool_call_id or "", self.content, is_error=self.is_error)
        calls = tuple(ToolCall(c.id, c.name, c.arguments) for c in self.tool_calls)
        return Message(self.role, self.content, calls)


class _Tool(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
    description: str = Field(default="", max_length=4000)
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    prompt: str | None = Field(default=None, min_length=1)
    messages: list[_Turn] | None = Field(default=None, min_length=1, max_length=MAX_TURNS)
    system: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    variant: Literal["fast", "standard", "powerful"] = "standard"
    max_tokens: int = Field(default=1024, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    tools: list[_Tool] = Field(default_factory=list, max_length=MAX_TOOLS)

    @model_validator(mode="after")
    def _one_input(self) -> "_Params":
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("give either 'prompt' or 'messages'")
        if self.tools and self.schema_ is not None:
            raise ValueError("give either 'tools' or 'schema', not both")
        return self


def _params(raw: dict[str, Any]) -> _Params:
    try:
        return _Params.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise DreamerError("invalid_argument", f"llm.complete: {where + ': ' if where else ''}{message}") from None


def _gateway(ctx: "SyscallContext") -> "Gateway":
    gateway: Gateway | None = getattr(ctx.invoker, "llm", None)
    if gateway is None:
        raise DreamerError("not_available", "this kernel was started without a model gateway")
    return gateway


async def llm_complete(ctx: "SyscallContext", params: dict[str, Any]) -> dict[str, Any]:
    gateway = _gateway(ctx)
    p = _params(params)
    model = gateway.model_for(p.variant)
    ctx.require("llm", action="llm.complete", target=model, detail={"variant": p.variant})
    turns = [Message.user(p.prompt)] if p.prompt is not None else [t.message() for t in p.messages or []]
    request = ChatRequest(
        messages=turns, system=p.system, variant=p.variant, temperature=p.temperature,
        max_tokens=min(p.max_tokens, gateway.config.max_tokens),
        tools=[ToolSpec(t.name, t.description, t.parameters) for t in p.tools],
    )
    # The model may not outlive the invocation that asked for it.
    left = None if ctx.caller.deadline is None else max(0.01, ctx.caller.deadline - time.monotonic())
    try:
        if p.schema_ is not None:
            result = await gateway.structured(request, p.schema_, user_id=ctx.who.user_id, agent=ctx.agent,
                                              invocation_id=ctx.invocation_id, timeout=left)
            answer = result.response
            return {"text": answer.text, "data": result.data, "model": answer.model, "usage": result.usage.to_dict(),
                    "stop_reason": answer.stop_reason, "attempts": result.attempts}
        answer = await gateway.complete(request, user_id=ctx.who.user_id, agent=ctx.agent,
                                        invocation_id=ctx.invocation_id, timeout=left)
    except DreamerError as exc:
        if exc.code == "budget_exceeded":
            ctx.record(action="llm.complete", target=model, decision="deny", detail={"reason": exc.code})
        raise
    out: dict[str, Any] = {"text": answer.text, "model": answer.model, "usage": answer.usage.to_dict(), "stop_reason": answer.stop_reason}
    if p.tools:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments, "error": c.error}
                             for c in answer.tool_calls]
    return out
