"""`ctx.sidekick` and `ctx.remember`: the worker side of the memory syscalls.

The kernel keeps the user's memory and checks the grants (memory:read,
memory:write); this module checks what agent code passes, so a mistake fails in
the agent with a TypeError or ValueError naming it, and shapes the answer.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dreamer.sdk.answers import build_answer, schema_param
from dreamer.sdk.errors import CallError

# The kernel's limit (dreamer.kernel.memory.text); the sandbox holds only the SDK, so it is repeated here.
MAX_FACT_CHARS = 1000


def read_params(question: object, schema: object) -> tuple[dict[str, Any], type[BaseModel] | None]:
    """The memory.read params, and the pydantic model to build the answer with (if one was given)."""
    if not isinstance(question, str) or not question.strip():
        raise TypeError("ctx.sidekick(question, schema=None) needs the question as a non-empty string")
    params: dict[str, Any] = {"question": question}
    json_schema, model = schema_param(schema, "ctx.sidekick")
    if json_schema is not None:
        params["schema"] = json_schema
    return params, model


def read_answer(answer: object, asked_schema: bool, model: type[BaseModel] | None) -> Any:
    """With a schema and the model's answer: that answer; otherwise the facts, most relevant first."""
    if not isinstance(answer, dict) or not isinstance(answer.get("facts"), list):
        raise CallError("protocol_error", "the kernel's answer to memory.read has no facts")
    facts = [str(f) for f in answer["facts"]]
    if not asked_schema or answer.get("answer") is None:
        return facts
    return build_answer(answer["answer"], model)


def write_params(fact: object) -> dict[str, Any]:
    if not isinstance(fact, str):
        raise TypeError("ctx.remember(fact) needs the fact as a string")
    cleaned = " ".join(fact.split())
    if not cleaned:
        raise ValueError("ctx.remember: the fact is empty")
    if len(cleaned) > MAX_FACT_CHARS:
        raise ValueError(f"ctx.remember: a fact can be at most {MAX_FACT_CHARS} characters long (this one has {len(cleaned)})")
    return {"fact": cleaned}
