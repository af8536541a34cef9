"""functions.json: strict validation whose errors name the file and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dreamer.contracts.functions import FunctionSpec, dump_functions, load_functions
from dreamer.contracts.errors import DreamerError

GOOD: dict[str, Any] = {
    "name": "add_items",
    "description": "Add items to the grocery list.",
    "parameters": {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}, "required": ["items"]},
    "result": {"type": "integer"},
    "exported": True,
    "background": False,
    "confirm": False,
    "examples": ["add {items} to my grocery list"],
}


def _write(folder: Path, document: Any) -> Path:
    text = document if isinstance(document, str) else json.dumps(document)
    (folder / "functions.json").write_text(text)
    return folder


def _error(folder: Path, document: Any) -> str:
    with pytest.raises(DreamerError) as caught:
        load_functions(_write(folder, document))
    assert caught.value.code == "invalid_bundle"
    assert caught.value.message.startswith("functions.json")
    assert "\n" not in caught.value.message
    return caught.value.message


def test_absent_file_means_none(tmp_path: Path) -> None:
    assert load_functions(tmp_path) is None


def test_good_file_loads_and_round_trips(tmp_path: Path) -> None:
    minimal = {"name": "ping"}
    specs = load_functions(_write(tmp_path, {"format": 1, "functions": [GOOD, minimal]}))
    assert specs is not None and [s.name for s in specs] == ["add_items", "ping"]
    assert specs[0].exported is True and specs[0].examples == GOOD["examples"]
    assert specs[1].parameters == {"type": "object", "properties": {}}
    assert specs[1].exported is False and specs[1].result == {}

    text = dump_functions(specs)
    assert json.loads(text)["format"] == 1
    assert text == dump_functions(load_functions(_write(tmp_path, text)) or [])


def _with(**changes: Any) -> dict[str, Any]:
    return {"format": 1, "functions": [{**GOOD, **changes}]}


@pytest.mark.parametrize(
    ("document", "field", "reason"),
    [
        (_with(name="add items"), "'functions.0.name' (function 'add items')", "required form"),
        (_with(name="1st"), "'functions.0.name'", "required form"),
        (_with(name="x" * 65), "'functions.0.name'", "required form"),
        (_with(description="d" * 4001), "'functions.0.description' (function 'add_items')", "4000"),
        (_with(parameters={"type": "array"}), "'functions.0.parameters'", '"type": "object"'),
        (_with(parameters={"type": "object", "properties": []}), "'functions.0.parameters'", "properties"),
        (_with(parameters="nope"), "'functions.0.parameters'", "dictionary"),
        (_with(exported="yes"), "'functions.0.exported'", "boolean"),
        (_with(confirm=1), "'functions.0.confirm'", "boolean"),
        (_with(examples=["e"] * 51), "'functions.0.examples'", "50"),
        (_with(examples=["e" * 301]), "'functions.0.examples.0'", "300"),
        (_with(examples="add milk"), "'functions.0.examples'", "list"),
        (_with(surprise=True), "'functions.0.surprise'", "unknown field"),
        ({"format": 2, "functions": []}, "'format'", "1"),
        ({"format": True, "functions": []}, "'format'", "number 1"),
        ({"format": 1}, "'functions'", "required"),
        ({"format": 1, "functions": [GOOD, GOOD]}, "'functions'", "'add_items' is listed twice"),
        ({"format": 1, "functions": [{"name": f"f{i}"} for i in range(501)]}, "'functions'", "500"),
        ({"format": 1, "functions": [GOOD], "extra": 1}, "'extra'", "unknown field"),
    ],
)
def test_errors_name_the_field(document: Any, field: str, reason: str, tmp_path: Path) -> None:
    message = _error(tmp_path, document)
    assert f"field {field}" in message, message
    assert reason in message, message


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"format": 1, "functions": [', "not valid JSON at line 1"),
        ("[]", "must be an object"),
        ("", "not valid JSON"),
    ],
)
def test_malformed_files(text: str, reason: str, tmp_path: Path) -> None:
    assert reason in _error(tmp_path, text)


def test_non_utf8_and_oversized_files(tmp_path: Path) -> None:
    (tmp_path / "functions.json").write_bytes(b'{"format": 1, "functions": [], "x": "\xff"}')
    with pytest.raises(DreamerError, match="not valid UTF-8"):
        load_functions(tmp_path)
    (tmp_path / "functions.json").write_text(" " * (4 * 1024 * 1024 + 1))
    with pytest.raises(DreamerError, match="larger than"):
        load_functions(tmp_path)


def test_a_link_in_place_of_the_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "functions.json").symlink_to("/etc/passwd")
    with pytest.raises(DreamerError, match="not a regular file"):
        load_functions(tmp_path)


def test_dump_refuses_duplicate_names() -> None:
    spec = FunctionSpec.model_validate(GOOD)
    with pytest.raises(DreamerError, match="functions.json: field 'functions': function 'add_items' is listed twice"):
        dump_functions([spec, spec])
