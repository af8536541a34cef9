"""@function(undo=, reply=, sidekick=): checked when the agent is defined and again at install."""

from __future__ import annotations

import json

import pytest

from dreamer.contracts.functions import parse_functions
from dreamer.contracts.errors import DreamerError
from dreamer.sdk import Context
from dreamer.sdk.decorators import describe
from dreamer.sdk.errors import DefinitionError


def add_items(ctx: Context, items: list[str]) -> dict:
    """Add items."""
    return {"added": items}


def test_declarations_reach_the_spec() -> None:
    spec = describe(add_items, exported=True, undo="remove_items", undo_args={"items": "result.added"},
                    undo_when="result.added", reply=["Added {added}."], sidekick=False).spec()
    assert spec["undo"] == {"function": "remove_items", "args": {"items": "result.added"}, "when": "result.added"}
    assert spec["reply"] == ["Added {added}."] and spec["sidekick"] is False
    assert describe(add_items, undo=False).spec()["undo"] is False
    # A read is not an irreversible change: "undo that" passes over it to the call before.
    assert describe(add_items, reads=True).spec()["reads"] is True
    hinted = describe(add_items, undo=False, undo_hint='Say "remove {added}" to take them off.').spec()
    assert hinted["undo"] is False and hinted["undo_hint"] == ['Say "remove {added}" to take them off.']
    # Nothing declared: the spec is what it was before these options existed.
    assert set(describe(add_items).spec()) == {"name", "description", "parameters", "result", "exported",
                                               "background", "confirm", "examples", "retries"}


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"undo": True}, "names the inverse"),
        ({"undo": "add_items"}, "its own undo"),
        ({"undo": 3}, "function name or False"),
        ({"undo": "remove_items", "undo_args": {"items": "added"}}, "not a reference"),
        ({"undo": "remove_items", "undo_args": {"items": "args.nope"}}, "names no parameter"),
        ({"undo_args": {"items": "result.added"}}, "without undo"),
        ({"reply": "Added {added"}, "brace"),
        ({"reply": 5}, "template or a list"),
        ({"reply": [""]}, "non-empty"),
        ({"sidekick": "no"}, "True or False"),
        ({"reads": "yes"}, "True or False"),
        ({"reads": True, "undo": False}, "nothing to undo"),
        ({"reads": True, "undo": "remove_items"}, "nothing to undo"),
        ({"undo_hint": "Remove them."}, "goes with undo=False"),
        ({"undo": False, "undo_hint": "Remove {added"}, "brace"),
    ],
)
def test_bad_declarations_are_refused_at_definition(options: dict, words: str) -> None:
    with pytest.raises(DefinitionError) as err:
        describe(add_items, **options)
    assert words in str(err.value)


def _file(**fields: object) -> str:
    return json.dumps({"format": 1, "functions": [{"name": "add", **fields}, {"name": "remove"}]})


def test_install_checks_the_same_rules() -> None:
    ok = parse_functions(_file(undo={"function": "remove", "args": {"items": "result.added"}}, reply=["Added {added}."]))
    assert ok[0].undo == {"function": "remove", "args": {"items": "result.added"}, "when": None}
    for bad, words in [
        (_file(undo={"function": "elsewhere"}), "not in the file"),
        (_file(undo={"function": "remove", "args": {"x": "os.system"}}), "not a reference"),
        (_file(undo={"function": "remove", "extra": 1}), "unknown fields"),
        (_file(undo=True), "undo"),
        (_file(reply=["{unclosed"]), "brace"),
        (_file(reply=["x" * 600]), "reply"),
        (_file(sidekick="yes"), "sidekick"),
        (_file(reads=True, undo=False), "nothing to undo"),
        (_file(undo_hint=["Remove them."]), "undo=False"),
        (_file(reads="yes"), "reads"),
    ]:
        with pytest.raises(DreamerError) as err:
            parse_functions(bad)
        assert err.value.code == "invalid_bundle" and words in err.value.message, err.value.message
