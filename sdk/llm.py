"""`ctx.llm`: the worker side of the `llm.complete` syscall.

The kernel does the work (the grant, the budget, the provider, validating a
structured answer against its schema); this module only checks what agent code
passes, so a mistake fails in the agent with a TypeError or ValueError naming
it, and turns the kernel's answer into what `ctx.llm` returns.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dreamer.sdk.answers import build_answer, schema_param
from dreamer.sdk.errors import CallError

VARIANTS = ("fast", "standard", "powerful")


def llm_params(
    prompt: object,
    schema: object,
    variant: object,
    system: object,
    max_tokens: object,
    temperature: object,
) -> tuple[dict[str, Any], type[BaseModel] | None]:
    """The syscall's params, and the pydantic model to build the answer with (if one was given)."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise TypeError("ctx.llm(prompt, ...) needs the prompt as a non-empty string")
    if variant not in VARIANTS:
        raise ValueError(f"ctx.llm: variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
    if system is not None and not isinstance(system, str):
        raise TypeError("ctx.llm: system must be a string or None")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError("ctx.llm: max_tokens must be a whole number of at least 1")
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))):
        raise TypeError("ctx.llm: temperature must be a number or None")
    params: dict[str, Any] = {"prompt": prompt, "variant": variant, "max_tokens": max_tokens}
    if system is not None:
        params["system"] = system
    if temperature is not None:
        params["temperature"] = float(temperature)
    json_schema, model = schema_param(schema, "ctx.llm")
    if json_schema is not None:
        params["schema"] = json_schema
    return params, model


def llm_answer(answer: object, structured: bool, model: type[BaseModel] | None) -> Any:
    if not isinstance(answer, dict) or "text" not in answer:
        raise CallError("protocol_error", "the kernel's answer to llm.complete has no text")
    if not structured:
        return answer["text"]
    if "data" not in answer:
        raise CallError("protocol_error", "the kernel's answer to llm.complete has no data for the schema")
    return build_answer(answer["data"], model)


def tool_turn_params(
    messages: object, tools: object, system: object, variant: object, max_tokens: object,
) -> dict[str, Any]:
    """The params of one tool-use turn (`ctx.llm_tools`); a mistake is a TypeError or ValueError."""
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        raise TypeError("ctx.llm_tools(messages, tools): messages is a non-empty list of dicts")
    if not isinstance(tools, list) or not all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools):
        raise TypeError("ctx.llm_tools(messages, tools): tools is a list of {name, description, parameters}")
    if variant not in VARIANTS:
        raise ValueError(f"ctx.llm_tools: variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
    if system is not None and not isinstance(system, str):
        raise TypeError("ctx.llm_tools: system must be a string or None")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError("ctx.llm_tools: max_tokens must be a whole number of at least 1")
    params: dict[str, Any] = {"messages": messages, "tools": tools, "variant": variant, "max_tokens": max_tokens}
    if system is not None:
        params["system"] = system
    return params


def tool_turn_answer(answer: object) -> dict[str, Any]:
    if not isinstance(answer, dict) or "text" not in answer or not isinstance(answer.get("tool_calls", []), list):
        raise CallError("protocol_error", "the kernel's answer to llm.complete with tools is not a turn")
    return {"text": answer["text"], "tool_calls": answer.get("tool_calls", []), "usage": answer.get("usage", {}),
            "stop_reason": answer.get("stop_reason"), "model": answer.get("model")}
