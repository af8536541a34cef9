"""One plain sentence with the number (or the names), from a plan and the rows it returned.

Values are said by their labels ("on leave", "no-show"), departments by name and code,
months as "October 2026", people by name (with their employee number when another person
in view has the same name).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from dreamer.sdk.semantic import Dimension, Model

from sql_explorer.plan import PERSON_GROUP, Filter, Group, Plan, TimeGroup, group_name

MAX_GROUPS_SAID = 10
MAX_OUTER_SAID = 6  # first-level groups said for a two-way grouping
_OPS = {">": "more than", ">=": "at least", "<": "fewer than", "<=": "at most", "=": "exactly"}
_NUMBER_OPS = {">": "over", ">=": "of at least", "<": "under", "<=": "of at most", "=": "of exactly"}
_AGG = {"avg": "average", "sum": "total", "min": "lowest", "max": "highest"}

Names = dict[str, dict[str, list[str]]]  # dimension -> code -> names in the data


def number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def plural(noun: str) -> str:
    if noun == "person":
        return "employees"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def label(group: Group | None, code: Any, names: dict[str, list[str]], person: str | None = None) -> str:
    """How an answer says one group's code."""
    if isinstance(group, Dimension):
        known = list(group.names.get(str(code), ())) or names.get(str(code), [])
        if known:
            return f"{known[0]} ({code})"
        return group.value_label(code)
    if isinstance(group, TimeGroup) and isinstance(code, str):
        try:
            return date.fromisoformat(f"{code}-01").strftime("%B %Y") if group.unit == "month" else code
        except ValueError:
            return code
    if group == PERSON_GROUP and person is not None:
        return person
    return str(code)


def _filter_words(f: Filter, names: Names) -> str:
    dim = f.dimension
    if dim.label or dim.names:
        return f"in {label(dim, f.code, names.get(dim.name, {}))}"
    return dim.filter_words(dim.value_label(f.code))


def quals(plan: Plan, names: Names) -> str:
    parts = [_filter_words(f, names) for f in plan.filters]
    if plan.range is not None:
        parts.append(plan.range.label if plan.range.words not in ("right now", "now", "currently", "today")
                     else f"today ({plan.range.start.isoformat()})")
    return (" " + " ".join(parts)) if parts else ""


def _ops(compare: Sequence[tuple[str, float]], words: dict[str, str]) -> str:
    if len(compare) == 2 and [op for op, _ in compare] == [">=", "<="]:
        return f"between {number(compare[0][1])} and {number(compare[1][1])}"
    return " and ".join(f"{words[op]} {number(n)}" for op, n in compare)


def _counted(plan: Plan, n: Any) -> str:
    """What the measure counts, as words: "absences", "different employees were absent"."""
    if plan.count == "number":
        return f"{_AGG.get(plan.agg, 'average')} {plan.number}"
    return plan.entity.counted(plan.count == "people", n)


def scalar(model: Model, plan: Plan, value: Any, names: Names) -> str:
    q = quals(plan, names)
    if plan.count == "number":
        if value is None:
            return f"There is no {plan.number} to take the {_AGG.get(plan.agg, 'average')} of{q}."
        return f"The {_counted(plan, value)}{q} is {number(value)}."
    value = value or 0
    ent = plan.entity
    if plan.count_groups:  # "3 departments have fewer than 11 employees"
        group = plan.groups[0]
        noun = group_name(group) if value == 1 else plural(group_name(group))
        verb = ("has" if value == 1 else "have") if plan.range is None else "had"
        if plan.number:
            return (f"{number(value)} {noun} {verb} an {_AGG.get(plan.agg, 'average')} {plan.number} "
                    f"{_ops(plan.compare, _NUMBER_OPS)}{q}.")
        return f"{number(value)} {noun} {verb} {_ops(plan.compare, _OPS)} {ent.noun}{q}."
    if plan.compare_on == "per_person":
        who = "employee" if value == 1 else "employees"
        return f"{number(value)} {who} had {_ops(plan.compare, _OPS)} {ent.counted(False, 2)}{q}."
    if plan.compare_on == "number":
        who = "employee has" if value == 1 else "employees have"
        return f"{number(value)} {who} a {plan.number} {_ops(plan.compare, _NUMBER_OPS)}{q}."
    return f"{number(value)} {_counted(plan, value)}{q}."


def _by(plan: Plan) -> str:
    return " and ".join(group_name(g) for g in plan.groups)


def grouped(model: Model, plan: Plan, groups: list[dict[str, Any]], names: Names) -> str:
    if plan.count == "number":
        what = _counted(plan, 2)
    else:
        what = plan.entity.noun if plan.count == "rows" else "different employees"
    if plan.compare_on == "per_group":  # "Departments with fewer than 12 employees: ..."
        noun = plural(group_name(plan.groups[0]))
        cond = (f"an {what} {_ops(plan.compare, _NUMBER_OPS)}" if plan.count == "number"
                else f"{_ops(plan.compare, _OPS)} {what}")
        per = f", per {group_name(plan.groups[1])}" if len(plan.groups) == 2 else ""
        head = f"{noun[0].upper()}{noun[1:]} with {cond}{per}{quals(plan, names)}"
    else:
        what = plan.entity.people_says if plan.count == "people" else what
        head = f"{what[0].upper()}{what[1:]} per {_by(plan)}{quals(plan, names)}"
    if not groups:
        return f"{head}: none."
    if len(plan.groups) == 2:
        return f"{head}: {_two_way(groups)}."
    said = ", ".join(f"{g['label']} {number(g['value'])}" for g in groups[:MAX_GROUPS_SAID])
    more = f", and {len(groups) - MAX_GROUPS_SAID} more" if len(groups) > MAX_GROUPS_SAID else ""
    return f"{head}: {said}{more}."


def _two_way(groups: list[dict[str, Any]]) -> str:
    outer: dict[str, list[str]] = {}
    for g in groups:
        outer.setdefault(g["label"], []).append(f"{g['label2']} {number(g['value'])}")
    parts = [f"{name}: {', '.join(inner)}" for name, inner in list(outer.items())[:MAX_OUTER_SAID]]
    more = f"; and {len(outer) - MAX_OUTER_SAID} more" if len(outer) > MAX_OUTER_SAID else ""
    return "; ".join(parts) + more


def _listed(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def top(model: Model, plan: Plan, best: list[dict[str, Any]], tied: list[dict[str, Any]], available: int,
        names: Names) -> str:
    """The best group(s). `best`: the groups named; `tied`: groups left out that tie with the last
    named (an exact top N); `available`: how many groups there were."""
    q = quals(plan, names)
    if not best:
        return f"There is nothing to rank{q}."
    most = "most" if plan.order == "max" else "fewest"
    if plan.count == "number":
        word = "highest" if plan.order == "max" else "lowest"
        what = f"{word} {plan.number}" if plan.agg in ("max", "min") else f"{word} {_AGG.get(plan.agg)} {plan.number}"
    else:
        what = f"{most} {plan.entity.noun if plan.count != 'people' else 'different employees'}"
    has = "had" if plan.range is not None else "has"
    if plan.exact and plan.limit is not None:
        noun = plural(group_name(plan.groups[0])) if len(plan.groups) == 1 else "groups"
        listed = _listed([f"{b['label']}: {number(b['value'])}" for b in best])
        if available < plan.limit:
            text = f"There {'is' if available == 1 else 'are'} only {available} {noun if available != 1 else group_name(plan.groups[0])}" \
                   f" to rank{q}; by the {what}: {listed}."
        else:
            text = f"The {len(best)} {noun} with the {what}{q}: {listed}."
        if tied:
            others = _listed([t["label"] for t in tied[:5]]) + (f" and {len(tied) - 5} more" if len(tied) > 5 else "")
            text += f" {others} {'ties' if len(tied) == 1 else 'tie'} with the last, at {number(tied[0]['value'])}."
        return text
    value = number(best[0]["value"])
    if len(best) == 1:
        return f"{best[0]['label']} {has} the {what}{q} ({value})."
    return f"{_listed([b['label'] for b in best])} tie for the {what}{q} ({value} each)."
