"""Parameter and result schemas built from type hints, and checking values against them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from dreamer.sdk import Context, InvalidArgument, ResultInvalid
from dreamer.sdk.decorators import describe


class Item(BaseModel):
    name: str
    quantity: int = 1


def params_of(func) -> dict[str, Any]:
    return describe(func).parameters.schema


def test_scalar_types_defaults_and_required() -> None:
    def f(ctx: Context, name: str, count: int, ratio: float = 0.5, urgent: bool = False) -> None: ...

    schema = params_of(f)
    props = schema["properties"]
    assert props["name"]["type"] == "string"
    assert props["count"]["type"] == "integer"
    assert props["ratio"] == {"default": 0.5, "title": "Ratio", "type": "number"}
    assert props["urgent"] == {"default": False, "title": "Urgent", "type": "boolean"}
    assert schema["required"] == ["name", "count"]
    assert schema["additionalProperties"] is False
    assert schema["type"] == "object"
    assert "ctx" not in props


def test_optional_and_lists() -> None:
    def f(ctx: Context, items: list[str], note: str | None = None, tags: list[str] | None = None) -> None: ...

    props = params_of(f)["properties"]
    assert props["items"] == {"items": {"type": "string"}, "title": "Items", "type": "array"}
    assert props["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Note"}
    assert props["tags"]["anyOf"][0] == {"items": {"type": "string"}, "type": "array"}


def test_pydantic_model_parameter_is_a_ref_and_arrives_as_a_model() -> None:
    def f(ctx: Context, item: Item, more: list[Item] = []) -> None: ...

    entry = describe(f)
    schema = entry.parameters.schema
    assert schema["properties"]["item"] == {"$ref": "#/$defs/Item"}
    assert schema["$defs"]["Item"]["properties"]["quantity"]["default"] == 1
    kwargs = entry.validate({"item": {"name": "milk"}})
    assert kwargs["item"] == Item(name="milk", quantity=1)
    assert kwargs["more"] == []


def test_unannotated_parameter_accepts_anything() -> None:
    def f(ctx, anything, other=3): ...

    entry = describe(f)
    assert entry.parameters.schema["properties"]["anything"] == {"title": "Anything"}
    assert entry.validate({"anything": {"x": [1]}}) == {"anything": {"x": [1]}, "other": 3}


def test_field_metadata_and_annotated_constraints() -> None:
    def f(
        ctx: Context,
        count: Annotated[int, Field(gt=0, description="how many")],
        unit: str = Field("pcs", description="the unit"),
    ) -> None: ...

    entry = describe(f)
    props = entry.parameters.schema["properties"]
    assert props["count"]["description"] == "how many" and props["count"]["exclusiveMinimum"] == 0
    assert props["unit"] == {"default": "pcs", "description": "the unit", "title": "Unit", "type": "string"}
    assert entry.validate({"count": 2}) == {"count": 2, "unit": "pcs"}
    with pytest.raises(InvalidArgument, match=r"argument 'count': Input should be greater than 0"):
        entry.validate({"count": 0})


def test_parameter_names_pydantic_would_refuse_still_work() -> None:
    def f(ctx: Context, json: bool, schema: str = "x", _private: int = 0, model_config: str = "") -> None: ...

    entry = describe(f)
    assert set(entry.parameters.schema["properties"]) == {"json", "schema", "_private", "model_config"}
    assert entry.validate({"json": True, "_private": 4}) == {
        "json": True,
        "schema": "x",
        "_private": 4,
        "model_config": "",
    }


def test_validation_messages_name_each_parameter() -> None:
    def f(ctx: Context, items: list[str], count: int = 1) -> None: ...

    entry = describe(f)
    with pytest.raises(InvalidArgument) as caught:
        entry.validate({"items": "milk"})
    assert caught.value.kind == "invalid_argument"
    assert caught.value.message == "argument 'items': Input should be a valid list"
    with pytest.raises(InvalidArgument, match=r"^missing argument 'items'$"):
        entry.validate({})
    with pytest.raises(InvalidArgument, match=r"^unknown argument 'itemz'$"):
        entry.validate({"items": [], "itemz": []})
    with pytest.raises(InvalidArgument) as caught:
        entry.validate({"items": ["a", 2], "count": "many"})
    assert caught.value.message == (
        "argument 'items[1]': Input should be a valid string; "
        "argument 'count': Input should be a valid integer, unable to parse string as an integer"
    )
    assert caught.value.data["errors"][0] == {
        "argument": "items[1]",
        "message": "Input should be a valid string",
        "type": "string_type",
    }
    with pytest.raises(InvalidArgument, match="arguments must be a JSON object, not null"):
        entry.validate(None)


def test_many_validation_problems_are_summarised() -> None:
    def f(ctx: Context, a: int, b: int, c: int, d: int, e: int, f: int, g: int) -> None: ...

    with pytest.raises(InvalidArgument) as caught:
        describe(f).validate({})
    assert caught.value.message.endswith("missing argument 'e' (and 2 more)")
    assert len(caught.value.data["errors"]) == 7


def test_result_schemas() -> None:
    def none(ctx): ...

    def number(ctx) -> int: ...

    def item(ctx) -> Item: ...

    def nothing(ctx) -> None: ...

    def items(ctx) -> list[Item]: ...

    assert describe(none).result.schema == {}
    assert describe(number).result.schema == {"type": "integer"}
    assert describe(item).result.schema["properties"]["name"] == {"title": "Name", "type": "string"}
    assert describe(nothing).result.schema == {"type": "null"}
    assert describe(items).result.schema["items"] == {"$ref": "#/$defs/Item"}


def test_result_dump_converts_close_matches_and_refuses_wrong_ones() -> None:
    def names(ctx) -> list[str]: ...

    def item(ctx) -> Item: ...

    def number(ctx) -> int: ...

    def anything(ctx): ...

    assert describe(names).result.dump(("a", "b"), "names") == ["a", "b"]
    assert describe(item).result.dump({"name": "milk"}, "item") == {"name": "milk", "quantity": 1}
    assert describe(item).result.dump(Item(name="jam", quantity=2), "item") == {"name": "jam", "quantity": 2}
    assert describe(anything).result.dump({"when": Path("/x"), "m": Item(name="a")}, "anything") == {
        "when": "/x",
        "m": {"name": "a", "quantity": 1},
    }
    with pytest.raises(ResultInvalid, match=r"^number returned a value that does not match its result type: "):
        describe(number).result.dump("seven", "number")
    with pytest.raises(ResultInvalid, match=r"^anything returned a value that cannot be sent as JSON: "):
        describe(anything).result.dump(object(), "anything")


def test_string_annotations_with_context_only_imported_for_type_checking(tmp_path: Path) -> None:
    source = '''
from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from dreamer.sdk import function

if TYPE_CHECKING:
    from dreamer.sdk import Context


class Date(BaseModel):
    day: str


@function
def add(ctx: Context, items: list[str], when: Date | None = None) -> dict[str, int]:
    """Add."""
    return {}
'''
    path = tmp_path / "late_hints.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("late_hints", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["late_hints"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop("late_hints", None)
    from dreamer.sdk import REGISTRY

    entry = REGISTRY.get("add")
    assert entry is not None
    assert entry.parameters.schema["properties"]["items"]["type"] == "array"
    assert entry.parameters.schema["properties"]["when"]["anyOf"][0] == {"$ref": "#/$defs/Date"}
    assert entry.result.schema == {"additionalProperties": {"type": "integer"}, "type": "object"}
