"""The semantic model (semantic.yaml) and the offline compiler of questions that map onto it.

A question maps when it names (or implies) one measure, filters by values of named
dimensions and at most one time range: "how many employees in operations were absent
last month?" is `absence_count` (distinct employees), department = one of the
departments called "...operations...", absence_date in last month. Anything else
needs a model, and the compiler says so instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from sqlglot import exp

from sql_explorer.fuzzy import Match, match_names
from sql_explorer.timeframe import Range, find_range

HERE = Path(__file__).resolve().parent
STOP = frozenset("""how many much what which who whom was were is are the a an of in on at for from during did do does
number count total there by with to have has had been be get show me tell please our my any all""".split())


@dataclass(frozen=True)
class Measure:
    name: str
    description: str
    table: str
    expression: str
    date: str | None
    words: tuple[str, ...]
    filter: Mapping[str, Any] | None = None
    default: bool = False
    says: str = "{value}"


@dataclass(frozen=True)
class Dimension:
    name: str
    table: str
    column: str
    label: str | None
    description: str


@dataclass(frozen=True)
class Model:
    version: int
    connection: str
    measures: dict[str, Measure]
    dimensions: dict[str, Dimension]
    joins: dict[tuple[str, str], tuple[str, str]]  # (from table, to table) -> (from column, to column)
    text: str  # the YAML, for a model's prompt


def load(path: Path = HERE / "semantic.yaml") -> Model:
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    measures = {n: Measure(n, m["description"], m["table"], m["expression"], m.get("date"), tuple(m.get("words") or ()),
                           m.get("filter"), bool(m.get("default")), str(m.get("says") or "{value}"))
                for n, m in data["measures"].items()}
    dims = {n: Dimension(n, d["table"], d["column"], d.get("label"), d.get("description", ""))
            for n, d in data["dimensions"].items()}
    joins: dict[tuple[str, str], tuple[str, str]] = {}
    for rel in data.get("relationships") or ():
        (ft, fc), (tt, tc) = rel["from"].split("."), rel["to"].split(".")
        joins[(ft, tt)] = (fc, tc)
    return Model(int(data["version"]), data["connection"], measures, dims, joins, text)


@dataclass
class Compiled:
    sql: str
    measure: Measure
    filters: dict[str, tuple[str, str]]  # dimension -> (value, words for it)
    range: Range | None


@dataclass
class Choice:
    """The question is ambiguous: which of these did the user mean?"""

    dimension: str
    said: str
    matches: list[Match]


@dataclass
class NeedsModel:
    reason: str


@dataclass
class Values:
    """What the compiler may look up: a dimension's codes and names (from the data, in the user's scope)."""

    names_by_code: Callable[[Dimension], dict[str, list[str]]]
    cache: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def of(self, dim: Dimension) -> dict[str, list[str]]:
        if dim.name not in self.cache:
            self.cache[dim.name] = self.names_by_code(dim)
        return self.cache[dim.name]


def compile_question(model: Model, question: str, today: date, values: Values,
                     choices: Mapping[str, str] | None = None) -> Compiled | Choice | NeedsModel:
    text = " ".join(question.replace("?", " ").split())
    rng = find_range(text, today)
    rest = text.lower()
    if rng is not None:
        rest = rest.replace(rng.said, " ")
    measure, rest = _measure(model, rest)
    if rng is not None and measure.date is None:
        return NeedsModel(f"{measure.name} has no date to limit to {rng.words}")
    filters: dict[str, tuple[str, str]] = {}
    choices = dict(choices or {})
    # Plain values of dimensions without names (status "active", reason "SICK") said as words.
    for dim in model.dimensions.values():
        if dim.label:
            continue
        for code in values.of(dim):
            spoken = code.lower().replace("_", " ")
            if re.search(rf"\b{re.escape(spoken)}\b", rest):
                filters[dim.name] = (code, code)
                rest = re.sub(rf"\b{re.escape(spoken)}\b", " ", rest)
                break
    words = [w for w in re.findall(r"[\w&.-]+", rest) if w not in STOP]
    while words and words[0] == "and":
        words.pop(0)
    while words and words[-1] == "and":
        words.pop()
    phrase = " ".join(words)
    labelled = [d for d in model.dimensions.values() if d.label]
    for dim in labelled:
        if dim.name in choices:
            known = values.of(dim)
            code = choices[dim.name]
            if code not in known:
                return NeedsModel(f"{code!r} is not a {dim.name} you can see")
            filters[dim.name] = (code, f"{known[code][0]} ({code})")
            phrase = ""
    if phrase:
        for dim in labelled:
            found = match_names(phrase, values.of(dim))
            if len(found) > 1:
                return Choice(dim.name, phrase, found)
            if len(found) == 1:
                filters[dim.name] = (found[0].code, f"{found[0].name} ({found[0].code})")
                phrase = ""
                break
    if phrase:
        return NeedsModel(f"I could not tell what {phrase!r} refers to in the data")
    return Compiled(_sql(model, measure, filters, rng), measure, filters, rng)


def _measure(model: Model, text: str) -> tuple[Measure, str]:
    best: tuple[int, Measure, str] | None = None
    # The default measure's words ("employees") name the subject, not what to count, unless nothing else is said.
    for measure in sorted(model.measures.values(), key=lambda m: m.default):
        if best is not None and measure.default:
            break
        for word in measure.words:
            if re.search(rf"\b{re.escape(word)}\b", text) and (best is None or len(word) > best[0]):
                best = (len(word), measure, word)
    if best is None:
        return next(m for m in model.measures.values() if m.default), text
    # Words that only say "employees" stay out of the filter phrase too.
    text = re.sub(rf"\b{re.escape(best[2])}\b", " ", text)
    for word in model.measures[next(n for n, m in model.measures.items() if m.default)].words:
        text = re.sub(rf"\b{re.escape(word)}\b", " ", text)
    return best[1], text


def _sql(model: Model, measure: Measure, filters: Mapping[str, tuple[str, str]], rng: Range | None) -> str:
    tables = [measure.table]
    conditions: list[str] = []
    if measure.filter:
        conditions.append(f"{measure.filter['column']} = {exp.Literal.string(str(measure.filter['equals'])).sql()}")
    for name, (value, _) in filters.items():
        dim = model.dimensions[name]
        if dim.table not in tables:
            tables.append(dim.table)
        conditions.append(f"{dim.table}.{dim.column} = {exp.Literal.string(value).sql()}")
    if rng is not None and measure.date:
        conditions.append(f"{measure.date} >= '{rng.start.isoformat()}' AND {measure.date} < '{rng.end.isoformat()}'")
    sql = f"SELECT {measure.expression} AS {measure.name} FROM {measure.table}"
    for table in tables[1:]:
        fc, tc = model.joins[(measure.table, table)]
        sql += f" JOIN {table} ON {measure.table}.{fc} = {table}.{tc}"
    if conditions:
        sql += " WHERE " + " AND ".join(conditions)
    return sql


def answer_words(compiled: Compiled, value: Any) -> str:
    said = compiled.measure.says.format(value=value)
    where = [f"in {name} {words}" if name == "department" else f"with {name} {words}"
             for name, (_, words) in compiled.filters.items()]
    when = f" {compiled.range.label} ({compiled.range.words})" if compiled.range is not None else ""
    text = said[0].upper() + said[1:] + ("" if not where else " " + " and ".join(where)) + when
    return text + f". Measure {compiled.measure.name}: {compiled.measure.description}."
