"""JSON schemas from a function's signature, and checking values against them.

Parameters become a pydantic model (extra='forbid'); the result type becomes a
TypeAdapter. Fields are stored under internal names (p0, p1, ...) with the
parameter name as alias, so parameters called `json`, `schema` or `_private`
work: pydantic would otherwise refuse or shadow them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.errors import PydanticUserError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from dreamer.sdk.errors import DefinitionError, InvalidArgument, ResultInvalid

# How many validation problems one error message lists before summarising.
MAX_LISTED_ERRORS = 5


@dataclass(frozen=True)
class Parameters:
    """The validated shape of a function's arguments."""

    model: type[BaseModel]
    names: dict[str, str]  # field name (p0, ...) -> parameter name
    schema: dict[str, Any] | None  # None until described (a worker's call does not need it)

    def validate(self, args: Any) -> dict[str, Any]:
        """Check JSON arguments; return keyword arguments for the function.

        Pydantic models among the parameters arrive as model instances.
        Raises InvalidArgument naming each offending parameter.
        """
        if not isinstance(args, dict):
            raise InvalidArgument(f"arguments must be a JSON object, not {_json_type(args)}")
        try:
            instance = self.model.model_validate(args)
        except ValidationError as exc:
            message, errors = describe_argument_errors(exc)
            raise InvalidArgument(message, {"errors": errors}) from None
        return {name: getattr(instance, field) for field, name in self.names.items()}


@dataclass(frozen=True)
class Result:
    """The declared result type of a function."""

    adapter: TypeAdapter[Any]
    schema: dict[str, Any] | None  # None until described

    def dump(self, value: Any, function: str) -> Any:
        """The value as JSON-ready data, or ResultInvalid naming the function.

        A value of exactly the declared type is serialized as is; otherwise it
        is validated first, so a tuple for list[str] or a dict for a model is
        accepted, and a str for int is refused.
        """
        try:
            return self.adapter.dump_python(value, mode="json", warnings="error")
        except Exception:  # noqa: BLE001 - fall through to validation, which explains
            pass
        try:
            validated = self.adapter.validate_python(value)
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            where = _path(first["loc"])
            at = f" at {where}" if where else ""
            raise ResultInvalid(
                f"{function} returned a value that does not match its result type{at}: {first['msg']}"
            ) from None
        except Exception as exc:  # noqa: BLE001 - a validator in the agent's own model failed
            raise ResultInvalid(f"{function} returned a value its result type refuses: {_one_line(exc)}") from None
        try:
            return self.adapter.dump_python(validated, mode="json")
        except Exception as exc:  # noqa: BLE001 - pydantic raises several types here
            raise ResultInvalid(f"{function} returned a value that cannot be sent as JSON: {_one_line(exc)}") from None


class Shapes:
    """A function's Parameters and Result, built when `@function` runs or, in a worker, on first use.

    Building them is most of what importing an agent costs (pydantic makes a model and a JSON
    schema per function), and a worker started for one call uses one function's. So a worker
    imports its agent under `deferred()`: the checks of the signature still run at import, the
    pydantic part waits for the first call that needs it. Everywhere else (describing a bundle,
    tests, the SDK's test kit) they are built at once, so a bad type is a DefinitionError at import.
    """

    def __init__(self, function: str, signature: inspect.Signature, hints: dict[str, Any]) -> None:
        self._args = (function, signature, hints)
        self._built: tuple[Parameters, Result] | None = None
        self._deferred = _DEFERRING
        if not self._deferred:
            self.described()

    def build(self) -> tuple[Parameters, Result]:
        """What a call needs: the parameters' model and the result's adapter (DefinitionError if not)."""
        if self._built is None:
            function, signature, hints = self._args
            # A deferred function is being called: its JSON schemas wait for a describe.
            self._built = (build_parameters(function, signature, hints, described=not self._deferred),
                           build_result(function, hints, described=not self._deferred))
        return self._built

    def described(self) -> tuple[Parameters, Result]:
        """Both shapes with their JSON schemas, as functions.json holds them."""
        parameters, result = self.build()
        if parameters.schema is None or result.schema is None:
            function = self._args[0]
            parameters = replace(parameters, schema=_json_schema(function, "parameters", parameters.model.model_json_schema))
            result = replace(result, schema=_json_schema(
                function, "result type", lambda: result.adapter.json_schema(mode="serialization")))
            self._built = (parameters, result)
        return parameters, result


_DEFERRING = False


@contextmanager
def deferred() -> Iterator[None]:
    """Functions registered inside this block build their pydantic shapes on first use (a worker's import)."""
    global _DEFERRING
    before, _DEFERRING = _DEFERRING, True
    try:
        yield
    finally:
        _DEFERRING = before


def _json_schema(function: str, what: str, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return make()
    except (PydanticUserError, TypeError, ValueError) as exc:
        raise DefinitionError(f"the {what} of {function} cannot be described as JSON: {_one_line(exc)}") from None


def build_parameters(function: str, signature: inspect.Signature, hints: dict[str, Any], *,
                     described: bool = True) -> Parameters:
    """A model for every parameter after the first (the Context); its JSON schema when `described`."""
    fields: dict[str, Any] = {}
    names: dict[str, str] = {}
    for index, param in enumerate(list(signature.parameters.values())[1:]):
        annotation = hints.get(param.name, Any)
        default: Any = ... if param.default is inspect.Parameter.empty else param.default
        if isinstance(default, FieldInfo):
            # `x: int = Field(3, description=...)`: pydantic merges a FieldInfo
            # inside Annotated (default, constraints) with the alias given here.
            annotation, default = Annotated[annotation, default], PydanticUndefined
        field_name = f"p{index}"
        fields[field_name] = (annotation, Field(default, alias=param.name))
        names[field_name] = param.name
    try:
        model = create_model(
            function,
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **fields,
        )
        schema = model.model_json_schema() if described else None
    except (PydanticUserError, TypeError, ValueError) as exc:
        raise DefinitionError(f"the parameters of {function} cannot be described as JSON: {_one_line(exc)}") from None
    return Parameters(model=model, names=names, schema=schema)


def build_result(function: str, hints: dict[str, Any], *, described: bool = True) -> Result:
    """The result adapter, and its JSON schema when `described`; no return annotation means any JSON value (schema {})."""
    if "return" not in hints:
        return Result(adapter=TypeAdapter(Any), schema={})
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(hints["return"])
        schema = adapter.json_schema(mode="serialization") if described else None
    except (PydanticUserError, TypeError, ValueError) as exc:
        raise DefinitionError(f"the result type of {function} cannot be described as JSON: {_one_line(exc)}") from None
    return Result(adapter=adapter, schema=schema)


def describe_argument_errors(exc: ValidationError) -> tuple[str, list[dict[str, str]]]:
    """One sentence per problem, naming the parameter; input values are left out."""
    errors: list[dict[str, str]] = []
    sentences: list[str] = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = err["loc"]
        where = _path(loc)
        name = str(loc[0]) if loc else ""
        if err["type"] == "missing" and len(loc) == 1:
            sentence = f"missing argument '{name}'"
        elif err["type"] == "extra_forbidden" and len(loc) == 1:
            sentence = f"unknown argument '{name}'"
        else:
            sentence = f"argument '{where}': {err['msg']}"
        errors.append({"argument": where, "message": err["msg"], "type": err["type"]})
        sentences.append(sentence)
    message = "; ".join(sentences[:MAX_LISTED_ERRORS])
    if len(sentences) > MAX_LISTED_ERRORS:
        message += f" (and {len(sentences) - MAX_LISTED_ERRORS} more)"
    return message, errors


def _path(loc: tuple[Any, ...]) -> str:
    """('items', 0, 'name') -> items[0].name"""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
