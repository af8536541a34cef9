"""ctx.sidekick and ctx.remember in the agent's process: what they send, what they return,
and the mistakes they catch before the kernel sees them. (The real channel and sandbox
are exercised in tests/e2e/test_memory.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from dreamer.sdk import CallError, Context, User
from dreamer.sdk.database import AgentDatabase

DIET = {"type": "object", "properties": {"avoid": {"type": "array", "items": {"type": "string"}}}}


class Kernel:
    def __init__(self, answer: Any = None) -> None:
        self.answer = answer
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.sent.append((method, params))
        return self.answer

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.sent.append((method, params))


class Diet(BaseModel):
    avoid: list[str]


def ctx_with(tmp_path: Path, answer: Any = None) -> tuple[Context, Kernel]:
    kernel = Kernel(answer)
    ctx = Context(user=User(id=1, name="ada", timezone="UTC"), invocation_id="inv-1", agent="recipes",
                  function="plan_dinner", kernel=kernel, database=AgentDatabase(tmp_path))
    return ctx, kernel


def test_without_a_schema_the_facts_come_back(tmp_path: Path) -> None:
    ctx, kernel = ctx_with(tmp_path, {"facts": ["I'm vegetarian"], "answer": None, "model": None})
    assert ctx.sidekick("What does the user eat?") == ["I'm vegetarian"]
    assert kernel.sent == [("memory.read", {"question": "What does the user eat?"})]


def test_with_a_schema_the_models_answer_comes_back(tmp_path: Path) -> None:
    ctx, kernel = ctx_with(tmp_path, {"facts": ["I'm vegetarian"], "answer": {"avoid": ["meat"]}, "model": "m"})
    assert ctx.sidekick("diet?", DIET) == {"avoid": ["meat"]}
    assert kernel.sent[-1] == ("memory.read", {"question": "diet?", "schema": DIET})
    typed = ctx.sidekick("diet?", Diet)
    assert isinstance(typed, Diet) and typed.avoid == ["meat"]
    assert kernel.sent[-1][1]["schema"] == Diet.model_json_schema()


def test_with_a_schema_but_no_answer_the_facts_come_back(tmp_path: Path) -> None:
    ctx, _ = ctx_with(tmp_path, {"facts": ["I'm vegetarian"], "answer": None, "model": None})
    assert ctx.sidekick("diet?", DIET) == ["I'm vegetarian"]
    assert ctx.sidekick("diet?", Diet) == ["I'm vegetarian"]


def test_an_answer_a_pydantic_model_refuses_is_a_model_error(tmp_path: Path) -> None:
    ctx, _ = ctx_with(tmp_path, {"facts": ["x"], "answer": {"avoid": "meat"}, "model": "m"})
    with pytest.raises(CallError) as caught:
        ctx.sidekick("diet?", Diet)
    assert caught.value.kind == "model_error" and "Diet" in caught.value.message


@pytest.mark.parametrize(
    ("args", "error"),
    [(("",), TypeError), (("   ",), TypeError), ((None,), TypeError), (("q", "not a schema"), TypeError),
     (("q", {"bad": float("nan")}), TypeError), (("q", int), TypeError)],
)
def test_mistakes_fail_in_the_agent(tmp_path: Path, args: tuple[Any, ...], error: type[Exception]) -> None:
    ctx, kernel = ctx_with(tmp_path)
    with pytest.raises(error):
        ctx.sidekick(*args)
    assert kernel.sent == []


def test_an_answer_without_facts_is_a_protocol_error(tmp_path: Path) -> None:
    ctx, _ = ctx_with(tmp_path, {"answer": None})
    with pytest.raises(CallError) as caught:
        ctx.sidekick("q")
    assert caught.value.kind == "protocol_error"


def test_remember_sends_the_fact(tmp_path: Path) -> None:
    ctx, kernel = ctx_with(tmp_path, {"id": 3, "created": True})
    assert ctx.remember("  Prefers   window seats ") is None
    assert kernel.sent == [("memory.write", {"fact": "Prefers window seats"})]


@pytest.mark.parametrize(("fact", "error"), [(7, TypeError), (None, TypeError), ("", ValueError), ("  ", ValueError),
                                             ("x" * 1001, ValueError)])
def test_remember_refuses_what_the_kernel_would(tmp_path: Path, fact: Any, error: type[Exception]) -> None:
    ctx, kernel = ctx_with(tmp_path)
    with pytest.raises(error):
        ctx.remember(fact)
    assert kernel.sent == []


def test_not_after_the_invocation(tmp_path: Path) -> None:
    ctx, _ = ctx_with(tmp_path)
    ctx._end()
    with pytest.raises(RuntimeError):
        ctx.sidekick("q")
    with pytest.raises(RuntimeError):
        ctx.remember("fact")
