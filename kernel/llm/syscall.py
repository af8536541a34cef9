"""The `llm.complete` syscall: an agent asks the model, under the `llm` grant.

params: {"prompt": str} or {"messages": [{"role": "user"|"assistant", "content": str}, ...]},
optional "system", "schema" (a JSON schema: the answer is validated JSON),
"variant" (fast | standard | powerful), "max_tokens" (capped by the configuration),
"temperature". Result: {"text", "data" (with a schema), "model", "usage", "stop_reason"}.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from dreamer.kernel.errors import DreamerError
from dreamer.kernel.llm.types import ChatRequest, Message

if TYPE_CHECKING:
    from dreamer.kernel.invocations.syscalls import SyscallContext
    from dreamer.kernel.llm.gateway import Gateway

MAX_TURNS = 200


class _Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    content: str = Field(min_length=1)


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    prompt: str | None = Field(default=None, min_length=1)
    messages: list[_Turn] | None = Field(default=None, min_length=1, max_length=MAX_TURNS)
    system: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    variant: Literal["fast", "standard", "powerful"] = "standard"
    max_tokens: int = Field(default=1024, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)

    @model_validator(mode="after")
    def _one_input(self) -> "_Params":
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("give either 'prompt' or 'messages'")
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
    gateway = getattr(ctx.invoker, "llm", None)
    if gateway is None:
        raise DreamerError("not_available", "this kernel was started without a model gateway")
    return gateway


async def llm_complete(ctx: "SyscallContext", params: dict[str, Any]) -> dict[str, Any]:
    gateway = _gateway(ctx)
    p = _params(params)
    model = gateway.model_for(p.variant)
    ctx.require("llm", action="llm.complete", target=model, detail={"variant": p.variant})
    turns = [Message.user(p.prompt)] if p.prompt is not None else [Message(t.role, t.content) for t in p.messages or []]
    request = ChatRequest(
        messages=turns, system=p.system, variant=p.variant, temperature=p.temperature,
        max_tokens=min(p.max_tokens, gateway.config.max_tokens),
    )
    # The model may not outlive the invocation that asked for it.
    left = None if ctx.caller.deadline is None else max(0.01, ctx.caller.deadline - time.monotonic())
    who = {"user_id": ctx.who.user_id, "agent": ctx.agent, "invocation_id": ctx.invocation_id, "timeout": left}
    try:
        if p.schema_ is not None:
            result = await gateway.structured(request, p.schema_, **who)
            answer = result.response
            return {"text": answer.text, "data": result.data, "model": answer.model, "usage": result.usage.to_dict(),
                    "stop_reason": answer.stop_reason, "attempts": result.attempts}
        answer = await gateway.complete(request, **who)
    except DreamerError as exc:
        if exc.code == "budget_exceeded":
            ctx.record(action="llm.complete", target=model, decision="deny", detail={"reason": exc.code})
        raise
    return {"text": answer.text, "model": answer.model, "usage": answer.usage.to_dict(), "stop_reason": answer.stop_reason}
