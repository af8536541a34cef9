"""functions.json: what a bundle's functions are, written by `dreamer build`, read at install.

Install trusts this file instead of running the agent's code in the kernel, so it
is validated strictly, and every error names the file and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from dreamer.contracts.examples import check_costs
from dreamer.contracts.manifest import IDENT_RE
from dreamer.contracts.errors import DreamerError
from dreamer.sdk.replies import check_templates, check_undo_hint_spec, check_undo_spec

FUNCTIONS_NAME = "functions.json"
MAX_FUNCTIONS_BYTES = 4 * 1024 * 1024
FORMAT: Literal[1] = 1

Example = Annotated[str, Field(max_length=300)]


def _empty_object_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


class FunctionSpec(BaseModel):
    # strict: a builder who writes "exported": "yes" should hear about it, not get True.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: Annotated[str, Field(pattern=IDENT_RE)]
    description: Annotated[str, Field(max_length=4000)] = ""
    parameters: dict[str, Any] = Field(default_factory=_empty_object_schema)
    result: dict[str, Any] = Field(default_factory=dict)
    exported: bool = False
    background: bool = False
    confirm: bool = False
    # Background functions only: attempts after the first one (failures and interruptions alike).
    retries: Annotated[int, Field(ge=0, le=10)] = 0
    examples: Annotated[list[Example], Field(max_length=50)] = Field(default_factory=list)
    # How Sidekick reverses a call ({"function", "args", "when"}; false: it cannot be), how a
    # result reads (templates over its fields), and whether Sidekick lists it as something it can do.
    # The grammar of both is the SDK's (dreamer.sdk.replies); Sidekick reads them, the kernel only checks them.
    undo: dict[str, Any] | bool | None = None
    reply: Annotated[list[Annotated[str, Field(max_length=500)]], Field(max_length=12)] = Field(default_factory=list)
    sidekick: bool = True
    # A call only reads (nothing to undo), and for undo=false what the user can do instead.
    reads: bool = False
    undo_hint: Annotated[list[Annotated[str, Field(max_length=500)]], Field(max_length=12)] = Field(default_factory=list)

    @field_validator("undo")
    @classmethod
    def _undo(cls, value: Any) -> Any:
        if value is True:
            raise ValueError("undo is an object naming the inverse function, or false")
        return check_undo_spec(value)

    @field_validator("reply")
    @classmethod
    def _reply(cls, value: list[str]) -> list[str]:
        return list(check_templates(value))

    @model_validator(mode="after")
    def _undo_hint(self) -> FunctionSpec:
        check_undo_hint_spec(self.undo, self.undo_hint or None, self.reads)
        return self

    @field_validator("parameters")
    @classmethod
    def _object_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("type") != "object":
            raise ValueError("parameters must be a JSON schema with \"type\": \"object\"")
        if not isinstance(value.get("properties", {}), dict):
            raise ValueError("parameters.properties must be an object")
        return value


class FunctionsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    format: Literal[1]
    functions: Annotated[list[FunctionSpec], Field(max_length=500)]

    @field_validator("format", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        # JSON true equals 1 in Python; a format number must be a number.
        if isinstance(value, bool):
            raise ValueError("format must be the number 1")
        return value

    @field_validator("functions")
    @classmethod
    def _unique_names(cls, value: list[FunctionSpec]) -> list[FunctionSpec]:
        seen: set[str] = set()
        for spec in value:
            if spec.name in seen:
                raise ValueError(f"function {spec.name!r} is listed twice")
            seen.add(spec.name)
        for spec in value:
            if isinstance(spec.undo, dict) and spec.undo["function"] not in seen:
                raise ValueError(f"function {spec.name!r} is undone by {spec.undo['function']!r}, which is not in the file")
        return value


def _where(loc: tuple[Any, ...], data: Any) -> str:
    where = f"'{'.'.join(str(part) for part in loc) or '(top level)'}'"
    # "functions.3.examples" is easier to act on with the function's name beside it.
    if len(loc) >= 2 and loc[0] == "functions" and isinstance(loc[1], int) and isinstance(data, dict):
        items = data.get("functions")
        if isinstance(items, list) and loc[1] < len(items) and isinstance(items[loc[1]], dict):
            name = items[loc[1]].get("name")
            if isinstance(name, str) and name:
                where += f" (function {name[:64]!r})"
    return where


def _describe(exc: ValidationError, data: Any) -> str:
    first = exc.errors()[0]
    msg = first["msg"].removeprefix("Value error, ")
    if first["type"] == "string_pattern_mismatch":
        msg = f"{str(first['input'])[:80]!r} does not have the required form"
    elif first["type"] == "extra_forbidden":
        msg = "unknown field"
    elif first["type"] == "missing":
        msg = "this field is required"
    more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
    return f"{FUNCTIONS_NAME}: field {_where(first['loc'], data)}: {msg}{more}"


def parse_functions(text: str) -> list[FunctionSpec]:
    """Validate functions.json text; raise DreamerError(invalid_bundle) naming the field."""
    if len(text.encode("utf-8", "surrogateescape")) > MAX_FUNCTIONS_BYTES:
        raise DreamerError("invalid_bundle", f"{FUNCTIONS_NAME}: the file is larger than {MAX_FUNCTIONS_BYTES} bytes")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DreamerError("invalid_bundle", f"{FUNCTIONS_NAME}: not valid JSON at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise DreamerError("invalid_bundle", f"{FUNCTIONS_NAME}: the file must be an object with 'format' and 'functions'")
    try:
        functions = list(FunctionsFile.model_validate(data).functions)
    except ValidationError as exc:
        raise DreamerError("invalid_bundle", _describe(exc, data)) from None
    too_costly = check_costs(functions, FUNCTIONS_NAME)
    if too_costly:
        raise DreamerError("invalid_bundle", too_costly)
    return functions


def load_functions(bundle_dir: Path) -> list[FunctionSpec] | None:
    """The bundle's functions, or None when it has no functions.json (not built yet, or a tool)."""
    path = Path(bundle_dir) / FUNCTIONS_NAME
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not path.is_file():
        raise DreamerError("invalid_bundle", f"{FUNCTIONS_NAME} is not a regular file")
    if path.stat().st_size > MAX_FUNCTIONS_BYTES:
        raise DreamerError("invalid_bundle", f"{FUNCTIONS_NAME}: the file is larger than {MAX_FUNCTIONS_BYTES} bytes")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise DreamerError("invalid_bundle", f"{FUNCTIONS_NAME}: the file is not valid UTF-8") from None
    return parse_functions(text)


def dump_functions(specs: Iterable[FunctionSpec]) -> str:
    """Serialise specs as functions.json text; same specs, same text."""
    try:
        document = FunctionsFile(format=FORMAT, functions=list(specs))
    except ValidationError as exc:
        raise DreamerError("invalid_bundle", _describe(exc, None)) from None
    return json.dumps(document.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
