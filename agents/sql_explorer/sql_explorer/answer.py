"""One plain sentence with the number (or the name), from a plan and the rows it returned."""

from __future__ import annotations

from typing import Any

from sql_explorer.compiler import PERSON_GROUP, Filter, Plan
from sql_explorer.model import Dimension, Model

MAX_GROUPS_SAID = 10
_OPS = {">": "more than", ">=": "at least", "<": "fewer than", "<=": "at most", "=": "exactly"}
_NUMBER_OPS = {">": "over", ">=": "of at least", "<": "under", "<=": "of at most", "=": "of exactly"}
_AGG = {"avg": "average", "sum": "total", "min": "lowest", "max": "highest"}


def number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def label(dim: Dimension | None, code: Any, names: dict[str, list[str]]) -> str:
    if dim is None:
        return str(code)
    known = list(dim.names.get(str(code), ())) or names.get(str(code), [])
    return f"{known[0]} ({code})" if known else str(code)


def _filter_words(f: Filter, names: dict[str, dict[str, list[str]]]) -> str:
    dim = f.dimension
    if dim.label or dim.names:
        return f"in {label(dim, f.code, names.get(dim.name, {}))}"
    if dim.name == "approval":
        return "that were approved" if f.code == "1" else "that were not approved"
    return f"with {dim.name.replace('_', ' ')} {f.code}"


def _quals(plan: Plan, names: dict[str, dict[str, list[str]]]) -> str:
    parts = [_filter_words(f, names) for f in plan.filters]
    if plan.range is not None:
        parts.append(plan.range.label if plan.range.words not in ("right now", "now", "currently", "today")
                     else f"today ({plan.range.start.isoformat()})")
    return (" " + " ".join(parts)) if parts else ""


def _what(model: Model, plan: Plan) -> str:
    """What the measure counts, as words: "absences", "different employees were absent"."""
    ent = plan.entity
    if plan.count == "number":
        return f"{_AGG.get(plan.agg, 'average')} {plan.number}"
    if plan.compare is not None and plan.compare_on == "per_person":
        op, n = plan.compare
        return f"employees had {_OPS[op]} {number(n)} {ent.says}"
    if plan.compare is not None and plan.compare_on == "number":
        op, n = plan.compare
        return f"employees have a {plan.number} {_NUMBER_OPS[op]} {number(n)}"
    if plan.count == "people":
        return ent.people_says
    return ent.says


def scalar(model: Model, plan: Plan, value: Any, names: dict[str, dict[str, list[str]]]) -> str:
    quals = _quals(plan, names)
    if value is None:
        value = 0 if plan.count != "number" else None
    if plan.count == "number":
        if value is None:
            return f"There is no {plan.number} to take the {_AGG.get(plan.agg, 'average')} of{quals}."
        return f"The {_what(model, plan)}{quals} is {number(value)}."
    return f"{number(value)} {_what(model, plan)}{quals}."


def grouped(model: Model, plan: Plan, rows: list[dict[str, Any]], names: dict[str, dict[str, list[str]]]) -> str:
    by = "person" if plan.group == PERSON_GROUP else plan.group.name.replace("_", " ")  # type: ignore[union-attr]
    what = _what(model, plan)
    head = f"{what[0].upper()}{what[1:]} per {by}{_quals(plan, names)}"
    if not rows:
        return f"{head}: none."
    said = ", ".join(f"{r['label']} {number(r['value'])}" for r in rows[:MAX_GROUPS_SAID])
    more = f", and {len(rows) - MAX_GROUPS_SAID} more" if len(rows) > MAX_GROUPS_SAID else ""
    return f"{head}: {said}{more}."


def top(model: Model, plan: Plan, best: list[dict[str, Any]], names: dict[str, dict[str, list[str]]]) -> str:
    quals = _quals(plan, names)
    if not best:
        return f"There is nothing to rank{quals}."
    if plan.count == "number":
        word = "highest" if plan.order == "max" else "lowest"
        what = f"the {word} {plan.number}" if plan.agg in ("max", "min") else f"the {word} {_AGG.get(plan.agg)} {plan.number}"
    else:
        word = "most" if plan.order == "max" else "fewest"
        what = f"the {word} {plan.entity.says if plan.count != 'people' else 'different employees'}"
    value = number(best[0]["value"])
    if plan.limit and plan.limit > 1:
        listed = ", ".join(f"{b['label']} ({number(b['value'])})" for b in best)
        return f"Top {len(best)} by {what[4:]}{quals}: {listed}."
    if len(best) == 1:
        return f"{best[0]['label']} had {what}{quals} ({value})."
    return f"{' and '.join(b['label'] for b in best)} tie for {what}{quals} ({value} each)."
