"""A data connection's semantic model as typed data: what its tables mean and how people say things.

The model is the `semantic` section of the connection's scopes file. The kernel checks it
when the file is uploaded (`parse(raw, columns)`: every table and column it names must
exist, so a broken model is refused then, with one sentence naming the field) and hands
it out with the catalogue; an agent reads it with `parse(catalog["semantic"])` and
compiles questions onto it. It is never trusted as SQL: every name in it must be an
identifier, and SQL is built from it as trees.

- entities: what can be counted (employees, absences, remote days, leave, hires): a table,
  an optional fixed condition, the person column, the time column, the nouns that count
  its rows, the words that say it happened ("absent", "from home"), and how an answer
  says it (`says` / `says_one`, `people_says` / `people_says_one`);
- joins: many-side column -> one-side column;
- numbers: numeric columns with their words (salary), and the words for the people they rank
  ("earners": the salary and who has it);
- dimensions: columns to filter and group by, with values and their synonyms, the label an
  answer uses for a value ("on leave", not on_leave), how a filter reads (`says: "with
  reason {value}"`), and names that resolve to codes (department names with their
  misspellings -> D0xx).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
MAX_WORDS = 500  # per list: the model is metadata, not data


class ModelError(ValueError):
    """The semantic model is not usable; the message names the field."""


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one object per entity
class Entity:
    name: str
    table: str
    person: str | None
    time: str | None
    label: str | None
    where: dict[str, str | int]
    description: str
    says: str
    people_says: str
    nouns: tuple[str, ...]
    events: tuple[str, ...]
    says_one: str = ""
    people_says_one: str = ""

    @property
    def noun(self) -> str:
        """What one row is called in a heading: "absences", "hires" (its first noun)."""
        return self.nouns[0] if self.nouns else self.says

    def counted(self, people: bool, n: Any) -> str:
        """How an answer names `n` of what this entity counts ("1 absence", "3 absences")."""
        one = n == 1
        if people:
            return (self.people_says_one or self.people_says) if one else self.people_says
        return (self.says_one or self.says) if one else self.says


@dataclass(frozen=True)
class Number:
    name: str
    table: str
    column: str
    description: str
    words: tuple[str, ...]
    people_words: tuple[str, ...] = ()  # words for the people it ranks ("earners")


@dataclass(frozen=True, eq=False)
class Dimension:
    name: str
    table: str
    column: str
    label: str | None
    description: str
    words: tuple[str, ...]
    values: dict[str, tuple[str, ...]]  # code (as text) -> synonyms
    names: dict[str, tuple[str, ...]]  # code -> names (resolved by fuzzy matching)
    numeric: bool = False  # the codes are numbers (approved 1/0)
    labels: dict[str, str] = field(default_factory=dict)  # code -> how an answer says it
    says: str = ""  # how a filter on it reads, with {value}: "with reason {value}"

    def value_label(self, code: Any) -> str:
        """A value as an answer says it: its label, else its first synonym, else the code."""
        key = str(code)
        if key in self.labels:
            return self.labels[key]
        synonyms = self.values.get(key)
        return synonyms[0] if synonyms else key

    def filter_words(self, label: str) -> str:
        word = self.words[0] if self.words else self.name.replace("_", " ")
        return (self.says or f"with {word} {{value}}").replace("{value}", label)


@dataclass(frozen=True)
class Join:
    many_table: str
    many_column: str
    one_table: str
    one_column: str


@dataclass(frozen=True)
class Model:
    version: int
    entities: dict[str, Entity]
    numbers: dict[str, Number]
    dimensions: dict[str, Dimension]
    joins: tuple[Join, ...]
    raw: dict[str, Any] = field(default_factory=dict)

    def entity_of_table(self, table: str) -> Entity | None:
        return next((e for e in self.entities.values() if e.table == table and not e.where), None)


class _Checker:
    """Names checked against the connection's tables and columns, when the kernel knows them."""

    def __init__(self, columns: Mapping[str, set[str]] | None) -> None:
        self.columns = {t.lower(): {c.lower() for c in cs} for t, cs in columns.items()} if columns is not None else None

    def ident(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not _IDENT.fullmatch(value):
            raise ModelError(f"{where} must be a table or column name")
        return value

    def table(self, value: Any, where: str) -> str:
        name = self.ident(value, where)
        if self.columns is not None and name.lower() not in self.columns:
            raise ModelError(f"{where}: {name!r} is not a table of the connection")
        return name

    def column(self, table: str, value: Any, where: str) -> str:
        name = self.ident(value, where)
        if self.columns is not None and name.lower() not in self.columns.get(table.lower(), set()):
            raise ModelError(f"{where}: table {table} has no column {name!r}")
        return name

    def dotted(self, text: Any, where: str) -> tuple[str, str]:
        if not isinstance(text, str) or text.count(".") != 1:
            raise ModelError(f"{where} must be table.column")
        table, column = text.split(".")
        table = self.table(table, where)
        return table, self.column(table, column, where)


def _words(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_WORDS or not all(
            isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise ModelError(f"{where} must be a list of words")
    return tuple(str(v).lower() for v in value)


def _mapping(value: Any, where: str) -> dict[Any, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ModelError(f"{where} must be a mapping")
    return value


def _text(value: Any, where: str, default: str = "") -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        raise ModelError(f"{where} must be text")
    return value[:300]


def _entity(name: str, e: Any, check: _Checker) -> Entity:
    where_at = f"entity {name}"
    if not isinstance(e, dict):
        raise ModelError(f"{where_at} must be a mapping with table, nouns and events")
    table = check.table(e.get("table"), f"{where_at}.table")
    fixed = _mapping(e.get("where"), f"{where_at}.where")
    if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in fixed.values()):
        raise ModelError(f"{where_at}.where must map columns to text or numbers")
    optional = {k: check.column(table, e[k], f"{where_at}.{k}") if e.get(k) else None for k in ("person", "time", "label")}
    says = _text(e.get("says"), f"{where_at}.says", name)
    people_says = _text(e.get("people_says"), f"{where_at}.people_says", says)
    return Entity(name, table, optional["person"], optional["time"], optional["label"],
                  {check.column(table, k, f"{where_at}.where"): v for k, v in fixed.items()},
                  _text(e.get("description"), f"{where_at}.description"), says, people_says,
                  _words(e.get("nouns"), f"{where_at}.nouns"), _words(e.get("events"), f"{where_at}.events"),
                  _text(e.get("says_one"), f"{where_at}.says_one"),
                  _text(e.get("people_says_one"), f"{where_at}.people_says_one"))


def _dimension(name: str, d: Any, check: _Checker) -> Dimension:
    at = f"dimension {name}"
    if not isinstance(d, dict):
        raise ModelError(f"{at} must be a mapping with table, column and values or names")
    table = check.table(d.get("table"), f"{at}.table")
    raw_values = _mapping(d.get("values"), f"{at}.values")
    values = {str(k): _words(v, f"{at}.values.{k}") for k, v in raw_values.items()}
    names: dict[str, tuple[str, ...]] = {}
    for code, listed in _mapping(d.get("names"), f"{at}.names").items():
        _words(listed, f"{at}.names.{code}")
        names[str(code)] = tuple(str(x) for x in listed)  # names keep their case: answers show them
    labels = {str(k): _text(v, f"{at}.labels.{k}") for k, v in _mapping(d.get("labels"), f"{at}.labels").items()}
    unknown = [k for k in labels if k not in values and k not in names]
    if unknown:
        raise ModelError(f"{at}.labels: {unknown[0]!r} is not one of its values")
    says = _text(d.get("says"), f"{at}.says")
    if says and "{value}" not in says:
        raise ModelError(f"{at}.says must contain {{value}}, where the value's label goes")
    numeric = bool(raw_values) and all(isinstance(k, int) and not isinstance(k, bool) for k in raw_values)
    return Dimension(name, table, check.column(table, d.get("column"), f"{at}.column"),
                     check.column(table, d["label"], f"{at}.label") if d.get("label") else None,
                     _text(d.get("description"), f"{at}.description"), _words(d.get("words"), f"{at}.words"),
                     values, names, numeric, labels, says)


def parse(raw: Any, columns: Mapping[str, set[str]] | None = None) -> Model:
    """The model in a catalogue's `semantic` mapping; ModelError naming the first problem.

    `columns` (table -> its column names): check every table and column the model names exists."""
    if not isinstance(raw, dict) or not raw.get("entities"):
        raise ModelError("the connection has no semantic model (it needs at least one entity)")
    check = _Checker(columns)
    version = raw.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelError("version must be a whole number from 1 up")
    entities = {str(n): _entity(str(n), e, check) for n, e in _mapping(raw.get("entities"), "entities").items()}
    numbers: dict[str, Number] = {}
    for n, v in _mapping(raw.get("numbers"), "numbers").items():
        if not isinstance(v, dict):
            raise ModelError(f"number {n} must be a mapping with table, column and words")
        table = check.table(v.get("table"), f"number {n}.table")
        numbers[str(n)] = Number(str(n), table, check.column(table, v.get("column"), f"number {n}.column"),
                                 _text(v.get("description"), f"number {n}.description"),
                                 _words(v.get("words"), f"number {n}.words"),
                                 _words(v.get("people_words"), f"number {n}.people_words"))
    dims = {str(n): _dimension(str(n), d, check) for n, d in _mapping(raw.get("dimensions"), "dimensions").items()}
    joins = []
    listed = raw.get("joins") or []
    if not isinstance(listed, list):
        raise ModelError("joins must be a list of {from: table.column, to: table.column}")
    for i, j in enumerate(listed, 1):
        if not isinstance(j, dict):
            raise ModelError(f"join {i} must be a mapping with from and to")
        (mt, mc), (ot, oc) = check.dotted(j.get("from"), f"join {i}.from"), check.dotted(j.get("to"), f"join {i}.to")
        joins.append(Join(mt, mc, ot, oc))
    return Model(version, entities, numbers, dims, tuple(joins), raw)
