"""The example syntax and its compiled form: alternatives, optional words, slots, weights."""

from __future__ import annotations

from dreamer.sidekick.planner import Tool
from dreamer.sidekick.planner.offline.index import (
    MAX_EXAMPLES_PER_TOOL,
    build_index,
    get_index,
    spec_hash,
)
from dreamer.sidekick.planner.offline.templates import MAX_EXPANSIONS, expand, slots_of

LIST = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}},
        "required": ["items"]}


def shape(example: str) -> list[list[tuple]]:
    return [
        [("slot", p.slot) if p.slot else ("any", p.choices) if p.choices else ("text", p.text.strip())
         for p in pieces if p.slot or p.choices or (p.text or "").strip()]
        for pieces in expand(example)
    ]


def test_one_word_alternatives_stay_one_pattern() -> None:
    assert shape("(add|put) {items} (on|to) the list") == [
        [("any", ("add", "put")), ("slot", "items"), ("any", ("on", "to")), ("text", "the list")]
    ]


def test_phrase_alternatives_expand() -> None:
    assert shape("how (do I|to) make {name}") == [
        [("text", "how"), ("text", "do I"), ("text", "make"), ("slot", "name")],
        [("text", "how"), ("text", "to"), ("text", "make"), ("slot", "name")],
    ]


def test_optional_parts_are_marked_not_expanded() -> None:
    pieces = expand("show [me] [my|the] list")[0]
    optional = {(p.text or "").strip() or p.choices: p.optional for p in pieces if (p.text or "").strip() or p.choices}
    assert optional == {"show": False, "me": True, ("my", "the"): True, "list": False}
    assert len(expand("show [me] [my|the] list")) == 1


def test_nested_groups_and_empty_branches() -> None:
    pieces = expand("a [b [c|d]] (e|) {x}")[0]
    marks = [(p.text.strip() if p.text else p.choices or p.slot, p.optional) for p in pieces
             if p.slot or p.choices or (p.text or "").strip()]
    assert marks == [("a", False), ("b", True), (("c", "d"), True), (("e",), True), ("x", False)]


def test_malformed_example_is_read_as_plain_words() -> None:
    assert shape("add (milk {items}") == [[("text", "add  milk"), ("slot", "items")]]
    assert shape("stray ] and | bars {x}") == [[("text", "stray   and   bars"), ("slot", "x")]]


def test_expansions_are_bounded() -> None:
    example = " ".join("(a b|c d)" for _ in range(10))
    assert len(expand(example)) == MAX_EXPANSIONS


def test_slots_of() -> None:
    assert slots_of("add {items} to {list_name} [on {day}]") == ["items", "list_name", "day"]


def _tool(examples: list[str], function: str = "add_items", agent: str = "grocery") -> Tool:
    return Tool(agent, function, "Add items to the list.", LIST, examples)


def test_index_merges_synonyms_and_drops_duplicates() -> None:
    # "delete" and "erase" are read as "remove", "shopping" as "grocery", "lists" as "list":
    # the three examples are one pattern.
    index = build_index([_tool(["remove {items} from my grocery list", "delete {items} from my shopping list",
                                "erase {items} from my grocery lists"], "remove_items")])
    assert len(index.patterns) == 1
    assert [e.canons[0] if e.canons else e.slot for e in index.patterns[0].elems] == [
        "remove", "items", "from", "my", "grocery", "list"]


def test_slot_only_examples_and_unknown_slots_are_ignored() -> None:
    index = build_index([_tool(["{items}", "add {nonexistent} please", "add {items}"])])
    assert [e.example for e in index.patterns] == ["add {items}"]


def test_rare_words_weigh_more_than_common_ones() -> None:
    tools = [_tool(["add {items} to my list"]), _tool(["show my list"], "list_items"),
             _tool(["clear my list"], "clear")]
    index = build_index(tools)
    assert index.weight("add") > index.weight("list") > index.weight("my")


def test_functions_without_examples_get_phrases_from_their_names() -> None:
    index = build_index([Tool("weather", "get_forecast", "The forecast.", {"type": "object", "properties": {}})])
    assert {" ".join(c for e in p.elems for c in e.canons) for p in index.patterns} == {
        "get forecast weather", "weather get forecast"}


def test_examples_per_tool_are_bounded() -> None:
    index = build_index([_tool([f"add {{items}} number{i}" for i in range(MAX_EXAMPLES_PER_TOOL + 20)])])
    assert len(index.patterns) == MAX_EXAMPLES_PER_TOOL


def test_index_is_cached_by_the_specs_and_rebuilt_when_they_change() -> None:
    first = [_tool(["add {items} to my list"])]
    assert get_index(first) is get_index([_tool(["add {items} to my list"])])  # equal specs, new objects
    changed = [_tool(["add {items} to my list", "buy {items}"])]
    assert spec_hash(changed) != spec_hash(first)
    assert get_index(changed) is not get_index(first)
