"""Reading words: tokens, stems, synonyms, typos, numbers, lists and typed slots."""

from __future__ import annotations

import pytest
from sidekick_support import NOW

from dreamer.sidekick.planner.language.slots import (
    Reading,
    SlotType,
    match_choice,
    parse_number,
    read,
    slot_type,
    split_items,
)
from dreamer.sidekick.planner.language.text import prepare, tokenize
from dreamer.sidekick.planner.language.vocabulary import Lexicon


def words(text: str) -> list[tuple[str, str]]:
    return [(w.low, w.kind) for w in tokenize(prepare(text))]


def test_tokens_keep_urls_times_and_dates_whole() -> None:
    assert words("Save https://example.com/a-b?x=1, then at 3:30pm on 2025-03-14 the 14th") == [
        ("save", "word"), ("https://example.com/a-b?x=1", "url"), ("then", "word"), ("at", "word"),
        ("3:30pm", "time"), ("on", "word"), ("2025-03-14", "date"), ("the", "word"), ("14th", "ord"),
    ]
    assert words("bookmark www.nytimes.com/story.html.") == [
        ("bookmark", "word"), ("www.nytimes.com/story.html", "url")]


def test_contractions_possessives_and_curly_apostrophes() -> None:
    assert [w for w, _ in words("What’s for dinner? Don't add friday's stuff & wine")] == [
        "what", "is", "for", "dinner", "do", "not", "add", "friday", "s", "stuff", "and", "wine"]


def test_punctuation_marks_the_word_before_it() -> None:
    toks = tokenize(prepare("milk, eggs; bread. then"))
    assert [(t.low, t.sep) for t in toks] == [("milk", ","), ("eggs", ";"), ("bread", "."), ("then", "")]


def test_slot_values_keep_the_users_spelling() -> None:
    text = prepare("Add 2 Liters of Milk")
    toks = tokenize(text)
    assert text[toks[1].start : toks[-1].end] == "2 Liters of Milk"


def test_stems_and_synonyms() -> None:
    lex = Lexicon(["add", "note", "plan", "recipe", "grocery", "list", "save"])
    assert lex.canon_word("adding") == "add"
    assert lex.canon_word("planning") == "plan"
    assert lex.canon_word("saved") == "save"
    assert lex.canon_word("notes") == "note"
    assert lex.canon_word("not") == "not"  # stemming never merges unrelated words
    assert lex.canon_word("recipes") == "recipe"
    assert lex.canon_word("groceries") == "grocery"
    assert lex.canon_word("shopping") == "grocery"  # a synonym
    assert lex.canon_word("supper") == "dinner"
    assert lex.phrases[("get", "rid", "of")] == "remove"


def test_typos_are_corrected_towards_known_words_only_when_close() -> None:
    lex = Lexicon(["grocery", "list", "calendar", "tomorrow", "plan"])
    assert lex.spell("grocry") == ("grocery", 1)
    assert lex.spell("lsit") == ("list", 1)  # a transposition is one edit
    assert lex.spell("calender") == ("calendar", 1)
    assert lex.spell("tommorow") == ("tomorrow", 2)
    assert lex.spell("pln") == ("plan", 1)  # three letters: only a missing one
    assert lex.spell("xylophone") is None
    assert lex.spell("ad") is None


@pytest.mark.parametrize(
    ("said", "value"),
    [(["25"], 25), (["twenty", "five"], 25), (["twenty-five"], 25), (["a", "dozen"], 12), (["3.5"], 3.5),
     (["one", "hundred", "and", "twenty"], 120), (["ten"], 10), (["1,000"], 1000)],
)
def test_numbers(said: list[str], value: float) -> None:
    assert parse_number(said) == value


@pytest.mark.parametrize("said", [["milk"], ["twenty", "milk"], [], ["a"], ["inf"], ["nan"], ["9" * 400]])
def test_not_numbers(said: list[str]) -> None:
    assert parse_number(said) is None


def test_list_items_split_on_commas_and_and_keeping_amounts() -> None:
    assert split_items("milk, eggs and 2 loaves of bread") == ["milk", "eggs", "2 loaves of bread"]
    assert split_items("some yogurt & a dozen eggs too") == ["yogurt", "a dozen eggs"]
    assert split_items("an onion, the chips plus salt and pepper") == ["onion", "chips", "salt", "pepper"]
    assert split_items("to my") == []  # small words are no items
    assert split_items("'salt and pepper' chips, \"rock, paper\" and mom's cake") == [
        "'salt and pepper' chips", "rock, paper", "mom's cake"]


def test_enum_choices_forgive_spelling_and_separators() -> None:
    assert match_choice("Middle-Eastern", ["middle_eastern", "thai"]) == ("middle_eastern", 1.0)
    assert match_choice("spansh", ["spanish", "french"])[0] == "spanish"
    assert match_choice("klingon", ["spanish", "french"]) is None


@pytest.mark.parametrize(
    ("name", "schema", "kind"),
    [
        ("items", {"type": "array", "items": {"type": "string"}}, "list"),
        ("max_minutes", {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}, "int"),
        ("price", {"type": "number"}, "number"),
        ("add_to_grocery_list", {"type": "boolean", "default": True}, "bool"),
        ("day", {"type": "string", "default": "today"}, "day"),
        ("when", {"type": "string", "format": "date"}, "day"),
        ("start", {"type": "string"}, "moment"),
        ("remind_at", {"type": "string"}, "moment"),
        ("due", {"type": "string", "format": "date-time"}, "moment"),
        ("url", {"type": "string"}, "url"),
        ("homepage", {"type": "string", "format": "uri"}, "url"),
        ("title", {"type": "string"}, "text"),
        ("size", {"$ref": "#/$defs/Size"}, "enum"),
        ("unit", {"type": "string", "enum": ["c", "f"]}, "enum"),
    ],
)
def test_slot_types_come_from_the_schema_and_conventional_names(name: str, schema: dict, kind: str) -> None:
    defs = {"Size": {"type": "string", "enum": ["small", "large"]}}
    assert slot_type(name, schema, False, defs).kind == kind


def test_hostile_schemas_give_text_not_errors() -> None:
    assert slot_type("x", {"$ref": "#/$defs/Loop"}, False, {"Loop": {"$ref": "#/$defs/Loop"}}).kind == "text"
    assert slot_type("x", {"anyOf": "nonsense"}, False).kind == "text"  # type: ignore[dict-item]
    assert slot_type("x", {"type": ["null", "integer"]}, False).kind == "int"


def reading(text: str) -> Reading:
    toks = tokenize(prepare(text))
    return Reading([t.low for t in toks], text, [t.kind for t in toks], NOW)


def test_readers() -> None:
    assert read(SlotType("day"), reading("next friday")) == ("2025-03-14", 1.0)
    assert read(SlotType("day"), reading("tonight")) == ("today", 1.0)
    assert read(SlotType("day"), reading("friday dinner")) is None
    assert read(SlotType("moment"), reading("tomorrow at 3pm")) == ("2025-03-13T15:00+01:00", 1.0)
    assert read(SlotType("int"), reading("thirty")) == (30, 1.0)
    assert read(SlotType("int"), reading("2.5")) is None
    assert read(SlotType("url"), reading("example.com/x")) == ("https://example.com/x", 1.0)
    assert read(SlotType("url"), reading("not a link")) is None
    assert read(SlotType("bool"), reading("yes")) == (True, 1.0)
    assert read(SlotType("list"), reading("milk and eggs")) == (["milk", "eggs"], 1.0)
    assert read(SlotType("list", item="int"), reading("3, 4 and five")) == ([3, 4, 5], 1.0)
    assert read(SlotType("text"), reading('"Quarterly review"')) == ("Quarterly review", 1.0)
    assert read(SlotType("text"), reading("that the code is 4512")) == ("the code is 4512", 1.0)
    assert read(SlotType("text"), reading("them")) == ("them", 0.2)  # something said before: a poor value
    assert read(SlotType("text"), reading("the")) is None
