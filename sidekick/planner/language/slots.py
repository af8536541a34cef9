"""Typed slots: what kind of value a parameter takes, and reading one from words.

The kind comes from the parameter's JSON schema (type, items, enum, format) and,
for plain strings, from conventional names: `day`/`date` hold a day, `start`/`end`/
`when` a moment, `url`/`link` an address. Readers return (value, quality) with
quality in (0, 1], or None when the words are not such a value at all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rapidfuzz import fuzz

from dreamer.sidekick.planner.language import dates
from dreamer.sidekick.planner.language.lexicon import (
    FILLERS,
    PRONOUNS,
    SCALES,
    TENS,
    UNITS,
)

KINDS = ("text", "list", "int", "number", "bool", "enum", "day", "moment", "url", "sql")
DAY_NAMES = frozenset({"day", "date", "on", "for_day", "which_day"})
MOMENT_NAMES = frozenset({"start", "end", "when", "at", "time", "due", "deadline", "starts", "ends",
                          "begins", "start_time", "end_time", "starts_at", "ends_at", "remind_at"})
URL_NAMES = frozenset({"url", "link", "href", "address", "website"})
# A parameter that takes a query as written ("run SELECT name FROM employees"): a typed value,
# read only from a statement that opens with SELECT or WITH, so it never takes everyday words.
SQL_NAMES = frozenset({"sql", "sql_query", "statement"})
SQL_OPENERS = frozenset({"select", "with"})
_ARTICLES = frozenset({"the", "a", "an", "my", "our", "your", "some", "all", "me", "us"})
MAX_ITEM_WORDS = 6
MAX_NUMBER = 1e15
MAX_KNOWN_VALUES = 200  # examples of a text parameter kept as values to look for
_LEADING = ("some ", "a few ", "a ", "an ", "the ", "more ", "any ", "and ", "also ")
QUANTITY = frozenset({"dozen", "few", "couple", "half", "pair", "lot", "bit", "little", "bunch", "bag", "box",
                       "bottle", "can", "jar", "loaf", "pack", "packet", "carton", "tin", "kilo", "pound"})
# A clause that says when or why ("... when I'm at the store", "... because we're out") ends an item.
# Matched on clean_text's output, whose spaces are single: no run of spaces to backtrack over.
_CLAUSE = re.compile(r" (?:when|whenever|while|because|since|if|once|next time|so that) .*$", re.IGNORECASE)
_POLITE_TAIL = (" please", " pls", " thanks", " thank you", " for me")
# "cheddar on the list", "milk to my shopping list": where the item goes is not part of it.
_DESTINATION = re.compile(r" (?:on|to|onto|in|into) (?:the |my |our )?(?:[\w-]+ )?list$", re.IGNORECASE)
_TRAILING = (" too", " as well", " also", " please", " thanks", " thank you", " for me", " pls", " anymore", " instead",
             " any more", " now")
# No `\s*` around the separators (clean_text strips each item): a leading `\s*` is tried from every
# space of a long run of spaces, quadratic in the message's length.
# "and" inside a hyphenated name ("half-and-half", "salt-and-vinegar crisps") joins no two items.
_LIST_SPLIT = re.compile(r",|;|(?<![\w-])and(?![\w-])|\balso\b|&|\bplus\b|\bas well as\b|\balong with\b|\+", re.IGNORECASE)
_QUOTES = re.compile(r"\"[^\"]+\"|“[^”]+”|(?<![\w'])'[^']+'(?![\w'])")
_YES = frozenset({"yes", "true", "on", "y", "yeah", "yep", "sure"})
_NO = frozenset({"no", "false", "off", "n", "nope"})


@dataclass(frozen=True)
class SlotType:
    """The kind of value a parameter takes; `choices` for enums, `item` for lists."""

    kind: str
    choices: tuple[str, ...] = ()
    item: str = "text"
    required: bool = False
    key: str = field(default="", compare=False)  # types with one key read words alike (a cache key)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", f"{self.kind}:{self.item}:{'|'.join(self.choices)}")


def slot_type(name: str, schema: Mapping[str, Any], required: bool, defs: Mapping[str, Any] | None = None) -> SlotType:
    """The slot type of parameter `name` with JSON schema `schema`.

    A text parameter whose schema lists `examples` (JSON schema's own keyword: typical
    values, not a restriction) keeps them as `choices`: one of them said anywhere in a
    request fills the parameter ("plan a vegetarian dinner" gives diet "vegetarian").
    """
    outer = schema.get("examples") if isinstance(schema, Mapping) else None
    schema = _resolve(schema, defs or {})
    known = schema.get("examples", outer)
    known = tuple(k for k in known[:MAX_KNOWN_VALUES] if isinstance(k, str) and k.strip()) if isinstance(known, list) else ()
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(e, str) for e in enum):
        return SlotType("enum", tuple(enum), required=required)
    if kind == "array":
        items = _resolve(schema.get("items") or {}, defs or {})
        inner = slot_type(name, items, False, defs)
        item = inner.kind if inner.kind in ("int", "number", "enum") else "text"
        return SlotType("list", inner.choices, item, required)
    if kind in ("integer", "number", "boolean"):
        return SlotType({"integer": "int", "number": "number", "boolean": "bool"}[kind], required=required)
    fmt = schema.get("format")
    lowered = name.lower()
    if fmt == "date" or lowered in DAY_NAMES or lowered.endswith(("_date", "_day")):
        return SlotType("day", required=required)
    if fmt in ("date-time", "time") or lowered in MOMENT_NAMES or lowered.endswith(("_at", "_time")):
        return SlotType("moment", required=required)
    if fmt in ("uri", "url") or lowered in URL_NAMES or lowered.endswith("_url"):
        return SlotType("url", required=required)
    if fmt == "sql" or lowered in SQL_NAMES:
        return SlotType("sql", required=required)
    return SlotType("text", known, required=required)


def _resolve(schema: Any, defs: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema itself with `$ref`s into $defs and `anyOf: [X, null]` unwrapped."""
    for _ in range(8):  # a bounded walk: hostile specs may nest or loop
        if not isinstance(schema, Mapping):
            return {}
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            schema = defs.get(ref.rsplit("/", 1)[-1], {})
            continue
        options = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(options, list):
            real = [o for o in options if isinstance(o, Mapping) and o.get("type") != "null"]
            if len(real) == 1:
                schema = real[0]
                continue
            if real:
                schema = real[0]
                continue
        return schema
    return {}


@dataclass(frozen=True)
class Reading:
    """What a reader needs: the words (lower-cased, spelling fixed), the user's text of them, and now."""

    words: Sequence[str]
    text: str
    kinds: Sequence[str]
    now: datetime


def read(slot: SlotType, reading: Reading) -> tuple[Any, float] | None:
    """The value these words give a slot of this type, with a quality, or None."""
    if not reading.words:
        return None
    kind = slot.kind
    if kind == "list":
        return _read_list(slot, reading)
    if kind == "int" or kind == "number":
        value = parse_number(reading.words)
        if value is None or (kind == "int" and value != int(value)):
            return None
        return (int(value) if kind == "int" else value), 1.0
    if kind == "bool":
        joined = " ".join(reading.words)
        if joined in _YES:
            return True, 1.0
        if joined in _NO:
            return False, 1.0
        return None
    if kind == "enum":
        return match_choice(" ".join(reading.words), slot.choices)
    if kind == "day":
        day = dates.parse_day(list(reading.words), reading.now.date())
        return (dates.day_value(day, reading.now.date()), 1.0) if day else None
    if kind == "moment":
        moment = dates.parse_moment(list(reading.words), reading.now)
        return (dates.moment_value(moment, reading.now), 1.0) if moment else None
    if kind == "url":
        if len(reading.words) != 1 or reading.kinds[0] != "url":
            return None
        url = reading.text.strip()
        return (url if "://" in url else "https://" + url), 1.0
    if kind == "sql":
        return _read_sql(reading)
    return _read_text(reading)


def _read_sql(reading: Reading) -> tuple[str, float] | None:
    """A statement as the user wrote it: it opens with SELECT or WITH and names a table (FROM)
    or is a bare SELECT of values; everyday words ("select a recipe") are not one."""
    words = [w.casefold() for w in reading.words]
    if len(words) < 2 or words[0] not in SQL_OPENERS or (words[0] == "with" and "select" not in words):
        return None
    if "from" not in words[1:] and not (words[0] == "select" and len(words) <= 4 and words[1][:1].isdigit()):
        return None
    if words[0] == "select" and "from" in words and _ARTICLES & set(words[1 : words.index("from")]):
        return None  # a column list has no articles: "select the vegetarian recipes from the catalog" is English
    text = reading.text.strip().rstrip(";").strip()
    return (text, 1.0) if text else None


def _read_text(reading: Reading) -> tuple[str, float] | None:
    text = _polite_end(clean_text(reading.text))
    words = reading.words
    if len(words) >= 4 and words[0] == "that" and text[:5].casefold() == "that ":
        text = text[5:].strip()  # "note that the code is 4512": the note is what follows "that"
    if not text:
        return None
    if all(w in FILLERS for w in words):
        return None
    quality = 1.0
    if all(w in PRONOUNS or w in FILLERS for w in words):
        quality = 0.2  # "save it": the value is something said before, which the planner cannot see
    return text, quality


def _polite_end(text: str) -> str:
    """A value without the courtesy after it: "a recipe with kale please" is about "kale"."""
    low = text.casefold()
    for tail in _POLITE_TAIL:
        if low.endswith(tail) and len(text) > len(tail):
            return text[: -len(tail)].rstrip(" ,")
    return text


def typical(text: str, choices: Sequence[str]) -> str | None:
    """The typical value of a text parameter (its schema's `examples`) these words are, said among
    small words ("me greek" is "greek"), or None."""
    words = [w for w in re.findall(r"[\w'-]+", text.casefold()) if w not in FILLERS]
    if not words or len(words) > 3:
        return None
    found = match_choice(" ".join(words), choices)
    return found[0] if found else None


def clean_text(text: str) -> str:
    """A free-text value as the user wrote it, without quotes around it or trailing punctuation."""
    return without_quotes(" ".join(text.split()).strip(" ,;:-")).rstrip(".!?").strip()


def without_quotes(text: str) -> str:
    """`text` without the quotes around the whole of it, or one left over from a cut."""
    for opening, closing in (('"', '"'), ("“", "”"), ("'", "'")):
        # Quotes around the whole value go; a quote left over from a cut goes; others stay
        # ("'salt and pepper' chips", "mom's birthday").
        if len(text) >= 2 and text[0] == opening and text[-1] == closing and text[1:-1].count(closing) == 0:
            text = text[1:-1]
        elif text[:1] == opening and text.count(opening) + (text.count(closing) if closing != opening else 0) == 1:
            text = text[1:]
        elif text[-1:] == closing and opening != "'" and text.count(closing) + text.count(opening) == 1:
            text = text[:-1]
    return text.strip()


# Names of one thing that hold "and" (fixed pairs, said in this order): one item, as if quoted.
_BINOMIALS = re.compile(
    r"\b(?:mac(?:aroni)? and cheese|salt and vinegar|sweet and sour|fish and chips|half and half|bread and butter(?= pudding| pickles)|peanut butter and jelly|pb and j|cookies and cream"
    r"|strawberries and cream|bangers and mash|surf and turf|chips and dip|chips and salsa|steak and kidney"
    r"|cheese and onion|salt and pepper (?:chips|crisps|squid|chicken|shrimp|prawns)|oil and vinegar dressing"
    r"|black and white cookies|rock and roll|mix and match)\b", re.IGNORECASE)


def split_items(text: str) -> list[str]:
    """'milk, eggs and 2 loaves of bread' -> ['milk', 'eggs', '2 loaves of bread'].

    A quoted stretch is one item, whatever it contains: "'salt and pepper' chips".
    """
    items: list[str] = []
    quoted: dict[str, str] = {}

    def mask(m: re.Match[str]) -> str:
        mark = f"\x00{len(quoted)}\x00"
        quoted[mark] = m.group()
        return mark

    masked = _BINOMIALS.sub(mask, _QUOTES.sub(mask, text))
    for raw in _LIST_SPLIT.split(masked):
        part = raw
        for mark, original in quoted.items():
            part = part.replace(mark, original)
        item = clean_text(_CLAUSE.sub("", clean_text(part)))
        placed = clean_text(_DESTINATION.sub("", item))
        if any(w not in FILLERS for w in placed.casefold().split()):
            item = placed  # "cheddar on the list" is cheddar; "it to the list" stays what it was
        low = item.casefold()
        changed = True
        while changed and item:
            changed = False
            for lead in _LEADING:
                if lead in ("a ", "an ") and low[len(lead):].split(" ", 1)[0] in QUANTITY:
                    continue  # "a dozen eggs", "a few apples": the article is part of the amount
                if low.startswith(lead) and len(item) > len(lead):
                    item, low, changed = item[len(lead):].strip(), low[len(lead):].strip(), True
            for tail in _TRAILING:
                if low.endswith(tail) and len(item) > len(tail):
                    item, low, changed = item[: -len(tail)].strip(), low[: -len(tail)].strip(), True
        if item and not all(w in FILLERS for w in low.split()):
            items.append(item)
    return items


def _read_list(slot: SlotType, reading: Reading) -> tuple[list[Any], float] | None:
    items = split_items(reading.text)
    if not items:
        return None
    if slot.item in ("int", "number"):
        values = [parse_number(i.casefold().split()) for i in items]
        if any(v is None for v in values):
            return None
        return [int(v) if slot.item == "int" else v for v in values if v is not None], 1.0
    if slot.item == "enum":
        picked = [match_choice(i.casefold(), slot.choices) for i in items]
        if any(p is None for p in picked):
            return None
        return [p[0] for p in picked if p], min(p[1] for p in picked if p)
    quality = 1.0
    for item in items:
        words = item.split()
        if len(words) > MAX_ITEM_WORDS:
            quality = min(quality, 0.6)
        if len(words) == 1 and words[0].casefold() in PRONOUNS:
            quality = min(quality, 0.5)
    return items, quality


def match_choice(text: str, choices: Sequence[str]) -> tuple[str, float] | None:
    """The enum value these words name (spelling and separators forgiven), or None."""
    said = re.sub(r"[\s_-]+", " ", text.casefold()).strip()
    best, best_score = None, 0.0
    for choice in choices:
        norm = re.sub(r"[\s_-]+", " ", choice.casefold()).strip()
        score = 100.0 if norm == said else fuzz.ratio(norm, said)
        if score > best_score:
            best, best_score = choice, score
    if best is None or best_score < 84:
        return None
    return best, best_score / 100.0


def parse_number(words: Sequence[str]) -> float | None:
    """Digits or number words ("25", "twenty five", "twenty-five", "a dozen"), or None."""
    parts: list[str] = []
    for w in words:
        parts.extend(p for p in w.replace("-", " ").split() if p)
    if not parts:
        return None
    if len(parts) == 1:
        token = parts[0]
        # "2,5" is a decimal comma; "1,000" a thousands separator.
        decimal_comma = token.count(",") == 1 and len(token.split(",")[1]) != 3
        token = token.replace(",", ".") if decimal_comma else token.replace(",", "")
        try:
            value = float(token)
            # "inf", "nan" and 400-digit numbers are no amounts anyone means.
            return value if math.isfinite(value) and abs(value) <= MAX_NUMBER else None
        except ValueError:
            pass
    total, current, seen = 0, 0, False
    for i, p in enumerate(parts):
        if p == "and" and seen:
            continue
        if p in ("a", "an") and i + 1 < len(parts) and parts[i + 1] in ("dozen", "hundred", "thousand", "couple"):
            current += 1
            seen = True
            continue
        if p in UNITS and p not in ("a", "an"):
            value = UNITS[p]
            if p in ("dozen",):
                current = max(current, 1) * 12
            elif p == "couple":
                current = max(current, 1) * 2
            else:
                current += value
        elif p in TENS:
            current += TENS[p]
        elif p in SCALES:
            current = max(current, 1) * SCALES[p]
            if SCALES[p] >= 1000:
                total, current = total + current, 0
        elif p.isdigit():
            current += int(p)
        else:
            return None
        seen = True
    return float(total + current) if seen and total + current <= MAX_NUMBER else None
