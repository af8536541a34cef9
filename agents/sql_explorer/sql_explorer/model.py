"""The semantic model as typed data: read from the connection's metadata (the `semantic`
section the kernel keeps next to the scopes, in the catalogue), checked, never trusted
as SQL: every name in it must be an identifier, and the compiler builds SQL trees from them.

- entities: what can be counted (employees, absences, remote days, leave, hires): a table,
  an optional fixed condition, the person column, the time column, the nouns that count
  its rows and the words that say it happened ("absent", "from home");
- joins: many-side column -> one-side column;
- numbers: numeric columns with their words (salary);
- dimensions: columns to filter and group by, with values and their synonyms, and names
  that resolve to codes (department names with their misspellings -> D0xx).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


class ModelError(ValueError):
    """The semantic model is not usable; the message says where."""


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


@dataclass(frozen=True)
class Number:
    name: str
    table: str
    column: str
    description: str
    words: tuple[str, ...]


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


def _ident(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _IDENT.fullmatch(value):
        raise ModelError(f"{where} must be a table or column name")
    return value


def _words(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) for v in value):
        raise ModelError(f"{where} must be a list of words")
    return tuple(str(v).lower() for v in value)


def _column(text: Any, where: str) -> tuple[str, str]:
    if not isinstance(text, str) or text.count(".") != 1:
        raise ModelError(f"{where} must be table.column")
    table, column = text.split(".")
    return _ident(table, where), _ident(column, where)


def parse(raw: Any) -> Model:
    """The model in a catalogue's `semantic` mapping; ModelError naming the first problem."""
    if not isinstance(raw, dict) or not raw.get("entities"):
        raise ModelError("the connection has no semantic model")
    version = raw.get("version", 1)
    entities: dict[str, Entity] = {}
    for name, e in (raw.get("entities") or {}).items():
        if not isinstance(e, dict):
            raise ModelError(f"entity {name} must be a mapping")
        where = e.get("where") or {}
        if not isinstance(where, dict) or not all(isinstance(v, (str, int)) for v in where.values()):
            raise ModelError(f"entity {name}: where must map columns to values")
        entities[str(name)] = Entity(
            str(name), _ident(e.get("table"), f"entity {name}.table"),
            _ident(e["person"], f"entity {name}.person") if e.get("person") else None,
            _ident(e["time"], f"entity {name}.time") if e.get("time") else None,
            _ident(e["label"], f"entity {name}.label") if e.get("label") else None,
            {_ident(k, f"entity {name}.where"): v for k, v in where.items()},
            str(e.get("description") or ""), str(e.get("says") or name), str(e.get("people_says") or e.get("says") or name),
            _words(e.get("nouns"), f"entity {name}.nouns"), _words(e.get("events"), f"entity {name}.events"))
    numbers = {str(n): Number(str(n), _ident(v.get("table"), f"number {n}.table"), _ident(v.get("column"), f"number {n}"),
                              str(v.get("description") or ""), _words(v.get("words"), f"number {n}.words"))
               for n, v in (raw.get("numbers") or {}).items() if isinstance(v, dict)}
    dims: dict[str, Dimension] = {}
    for n, d in (raw.get("dimensions") or {}).items():
        if not isinstance(d, dict):
            raise ModelError(f"dimension {n} must be a mapping")
        values = {str(k): _words(v, f"dimension {n}.values") for k, v in (d.get("values") or {}).items()}
        names = {str(k): tuple(str(x) for x in v) for k, v in (d.get("names") or {}).items() if isinstance(v, list)}
        numeric = bool(values) and all(isinstance(k, int) for k in (d.get("values") or {}))
        dims[str(n)] = Dimension(str(n), _ident(d.get("table"), f"dimension {n}.table"),
                                 _ident(d.get("column"), f"dimension {n}.column"),
                                 _ident(d["label"], f"dimension {n}.label") if d.get("label") else None,
                                 str(d.get("description") or ""), _words(d.get("words"), f"dimension {n}.words"),
                                 values, names, numeric)
    joins = []
    for j in raw.get("joins") or ():
        if not isinstance(j, dict):
            raise ModelError("each join must be a mapping with from and to")
        (mt, mc), (ot, oc) = _column(j.get("from"), "join.from"), _column(j.get("to"), "join.to")
        joins.append(Join(mt, mc, ot, oc))
    return Model(int(version) if isinstance(version, int) else 1, entities, numbers, dims, tuple(joins), raw)
