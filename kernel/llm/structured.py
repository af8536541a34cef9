"""Structured output: an answer that is JSON matching a schema, or a clear failure.

The schema travels twice: as the provider's native mechanism (a forced tool for
Anthropic, `response_format` for OpenAI-compatible servers, via
ChatRequest.response_schema) and in words in the system prompt, for servers that
ignore the former. Whatever comes back is validated with `jsonschema`; an
invalid answer is shown to the model with the validation error, a bounded number
of times.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm.errors import clip
from dreamer.kernel.llm.types import ChatRequest, ChatResponse, Message, Usage

MAX_SCHEMA_BYTES = 64 * 1024
MAX_RETRIES = 5
ANSWER_KEY = "value"
_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Structured:
    data: Any
    response: ChatResponse  # the last answer
    usage: Usage  # summed over every attempt
    attempts: int


def validator_for(schema: object) -> Validator:
    """A validator for `schema`, or invalid_argument saying why it is not a JSON schema."""
    if not isinstance(schema, dict):
        raise DreamerError("invalid_argument", "the schema must be a JSON schema object")
    try:
        size = len(json.dumps(schema))
    except (TypeError, ValueError):
        raise DreamerError("invalid_argument", "the schema must be plain JSON") from None
    if size > MAX_SCHEMA_BYTES:
        raise DreamerError("invalid_argument", f"the schema is larger than {MAX_SCHEMA_BYTES // 1024} KB")
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise DreamerError("invalid_argument", f"the schema is not a valid JSON schema: {clip(exc.message, 200)}") from None
    return cls(schema)


def as_object_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Providers want an object at the top (a tool's input, a json_schema answer);
    any other schema is wrapped as {"value": ...} and unwrapped afterwards."""
    if schema.get("type") == "object":
        return schema, False
    return {"type": "object", "properties": {ANSWER_KEY: schema}, "required": [ANSWER_KEY]}, True


def parse_json(text: str) -> Any:
    """The JSON in a model's answer: the whole text, a fenced block, or the outermost
    {...} / [...] in it. Raises ValueError when there is none."""
    stripped = text.strip()
    candidates = [stripped]
    fenced = _FENCE.search(stripped)
    if fenced:
        candidates.append(fenced.group(1))
    for open_, close in (("{", "}"), ("[", "]")):
        start, end = stripped.find(open_), stripped.rfind(close)
        if 0 <= start < end:
            candidates.append(stripped[start : end + 1])
    error: ValueError | None = None
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError as exc:
            error = error or exc
    raise ValueError(f"the answer is not JSON ({error})" if stripped else "the answer is empty")


def problem_with(validator: Validator, data: Any) -> str | None:
    error = best_match(validator.iter_errors(data))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "the top level"
    return f"at {where}: {clip(error.message, 200)}"


def instructions(schema: dict[str, Any]) -> str:
    return (
        "Answer with only a JSON value that matches this JSON schema, with no other text:\n"
        + json.dumps(schema, ensure_ascii=False)
    )


async def structured(
    complete: Callable[[ChatRequest], Awaitable[ChatResponse]],
    request: ChatRequest,
    schema: dict[str, Any],
    retries: int = 2,
) -> Structured:
    """Ask until the answer validates against `schema`, at most 1 + `retries` times."""
    validator = validator_for(schema)
    wire_schema, wrapped = as_object_schema(schema)
    system = "\n\n".join(part for part in (request.system, instructions(wire_schema)) if part)
    asking = replace(request, system=system, response_schema=wire_schema, tools=[], tool_choice=None)
    usage = Usage()
    attempts = max(0, min(retries, MAX_RETRIES)) + 1
    problem = "no answer"
    for attempt in range(1, attempts + 1):
        response = await complete(asking)
        usage = usage + response.usage
        try:
            data = parse_json(response.text)
            if wrapped:
                if not isinstance(data, dict) or ANSWER_KEY not in data:
                    raise ValueError(f'the answer must be an object with the key "{ANSWER_KEY}"')
                data = data[ANSWER_KEY]
        except ValueError as exc:
            problem = clip(str(exc), 200)
            if response.stop_reason == "max_tokens":
                problem += f" (the answer was cut off at max_tokens={request.max_tokens})"
        else:
            found = problem_with(validator, data)
            if found is None:
                return Structured(data, response, usage, attempt)
            problem = found
        asking = replace(asking, messages=[
            *asking.messages,
            Message.assistant(response.text or "(empty)"),
            Message.user(f"That answer does not match the schema: {problem}. Reply again with only the corrected JSON."),
        ])
    raise DreamerError(
        "model_error",
        f"the model gave no answer that matches the schema in {attempts} attempts; the last one was wrong {problem}"
        if problem.startswith("at ") else
        f"the model gave no answer that matches the schema in {attempts} attempts: {problem}",
    )
