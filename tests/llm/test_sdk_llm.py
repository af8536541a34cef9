"""`ctx.llm` in the SDK: what it sends as the llm.complete syscall and what it returns,
and `llm.complete`'s own parameter checks in the kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm.syscall import _params
from dreamer.sdk import CallError, Context, User
from dreamer.sdk.database import AgentDatabase
from dreamer.sdk.errors import KINDS


class Recorder:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.sent.append((method, params))
        return self.answer

    def notify(self, method: str, params: dict[str, Any]) -> None:
        raise AssertionError("ctx.llm sends no notifications")


def ctx_with(tmp_path: Path, answer: Any) -> tuple[Context, Recorder]:
    kernel = Recorder(answer)
    ctx = Context(user=User(id=1, name="ada", timezone="UTC"), invocation_id="inv-1", agent="recipes",
                  function="suggest", kernel=kernel, database=AgentDatabase(tmp_path))
    return ctx, kernel


def test_text(tmp_path: Path) -> None:
    ctx, kernel = ctx_with(tmp_path, {"text": "Leek soup.", "model": "m", "usage": {}})
    assert ctx.llm("What should I cook?") == "Leek soup."
    assert kernel.sent == [("llm.complete", {"prompt": "What should I cook?", "variant": "standard", "max_tokens": 1024})]


def test_a_schema_returns_the_data(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"dish": {"type": "string"}}, "required": ["dish"]}
    ctx, kernel = ctx_with(tmp_path, {"text": '{"dish": "soup"}', "data": {"dish": "soup"}, "model": "m", "usage": {}})
    assert ctx.llm("cook?", schema=schema, variant="fast", system="Be brief.", max_tokens=50, temperature=0) == {"dish": "soup"}
    assert kernel.sent[0][1] == {"prompt": "cook?", "variant": "fast", "max_tokens": 50, "system": "Be brief.",
                                 "temperature": 0.0, "schema": schema}


def test_a_pydantic_model_as_the_schema(tmp_path: Path) -> None:
    class Dish(BaseModel):
        name: str
        minutes: int = Field(ge=1)

    ctx, kernel = ctx_with(tmp_path, {"text": "", "data": {"name": "soup", "minutes": 30}, "model": "m", "usage": {}})
    dish = ctx.llm("cook?", schema=Dish)
    assert isinstance(dish, Dish) and dish.minutes == 30
    assert kernel.sent[0][1]["schema"] == Dish.model_json_schema()

    ctx, _ = ctx_with(tmp_path, {"text": "", "data": {"name": "soup", "minutes": 0}, "model": "m", "usage": {}})
    with pytest.raises(CallError) as caught:
        ctx.llm("cook?", schema=Dish)
    assert caught.value.kind == "model_error" and "does not fit Dish: minutes" in caught.value.message


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"prompt": ""}, TypeError, "non-empty string"),
        ({"prompt": 42}, TypeError, "non-empty string"),
        ({"prompt": "x", "variant": "turbo"}, ValueError, "variant must be one of fast, standard, powerful"),
        ({"prompt": "x", "max_tokens": 0}, ValueError, "max_tokens"),
        ({"prompt": "x", "schema": "not a schema"}, TypeError, "schema must be"),
        ({"prompt": "x", "schema": {"bad": object()}}, TypeError, "plain JSON"),
        ({"prompt": "x", "system": 3}, TypeError, "system"),
    ],
)
def test_mistakes_fail_in_the_agent(tmp_path: Path, kwargs: dict[str, Any], error: type[Exception], words: str) -> None:
    ctx, kernel = ctx_with(tmp_path, {"text": "x"})
    with pytest.raises(error, match=words):
        ctx.llm(**kwargs)
    assert kernel.sent == []


def test_refusals_keep_their_kind_when_uncaught() -> None:
    # An agent that does not catch budget_exceeded fails with that kind, not agent_error.
    assert {"budget_exceeded", "model_error", "not_available", "permission_denied"} <= KINDS


def test_llm_after_the_invocation_ended(tmp_path: Path) -> None:
    ctx, _ = ctx_with(tmp_path, {"text": "x"})
    ctx._end()
    with pytest.raises(RuntimeError, match="ctx.llm was used after invocation inv-1 ended"):
        ctx.llm("hello")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "llm.complete: give either 'prompt' or 'messages'"),
        ({"prompt": ""}, "llm.complete: prompt: String should have at least 1 character"),
        ({"prompt": "a", "messages": [{"role": "user", "content": "b"}]}, "llm.complete: give either 'prompt' or 'messages'"),
        ({"prompt": "a", "variant": "turbo"}, "llm.complete: variant: Input should be 'fast', 'standard' or 'powerful'"),
        ({"prompt": "a", "max_tokens": 0}, "llm.complete: max_tokens: Input should be greater than or equal to 1"),
        ({"messages": [{"role": "system", "content": "b"}]}, "llm.complete: messages.0.role: Input should be 'user', 'assistant' or 'tool'"),
        ({"messages": [{"role": "tool", "content": "b"}]}, "llm.complete: messages.0: a tool turn needs the tool_call_id it answers"),
        ({"prompt": "a", "tools": [{"name": "x"}], "schema": {"type": "object"}}, "llm.complete: give either 'tools' or 'schema', not both"),
        ({"prompt": "a", "tool_choice": "x"}, "llm.complete: tool_choice: Extra inputs are not permitted"),
    ],
)
def test_syscall_params_are_checked(params: dict[str, Any], message: str) -> None:
    with pytest.raises(DreamerError) as caught:
        _params(params)
    assert caught.value.code == "invalid_argument" and caught.value.message == message
