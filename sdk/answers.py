"""Schemas an agent hands to the kernel, and answers built back from them.

`ctx.llm` and `ctx.sidekick` both take "a JSON schema or a pydantic model class"
and give back plain data or an instance of that class.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from dreamer.sdk.errors import CallError


def schema_param(schema: object, member: str) -> tuple[dict[str, Any] | None, type[BaseModel] | None]:
    """The JSON schema to send (or None) and the pydantic class to build the answer with."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema(), schema
    if isinstance(schema, dict):
        try:
            json.dumps(schema, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{member}: the schema must be plain JSON: {exc}") from None
        return schema, None
    if schema is not None:
        raise TypeError(f"{member}: schema must be a JSON schema (a dict) or a pydantic model class")
    return None, None


def build_answer(data: Any, model: type[BaseModel] | None) -> Any:
    """`data` as is, or as an instance of `model` (whose own validators may still refuse it)."""
    if model is None:
        return data
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the answer"
        raise CallError("model_error", f"the model's answer does not fit {model.__name__}: {where}: {first['msg']}") from None
