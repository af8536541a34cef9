"""A compiled plan as one SQL query, built as a sqlglot tree (never by pasting text).

Tables are joined along the model's joins (from the counted table to the ones its
filters and groups live in); a path the model does not have is PlanError, said in one
sentence. The query then goes to the kernel like any other: validator, scope rewriter,
engine layer.
"""

from __future__ import annotations

from collections import deque

from sqlglot import exp

from sql_explorer.compiler import PERSON_GROUP, Plan
from sql_explorer.model import Dimension, Join, Model

MEASURE = "value"


class PlanError(ValueError):
    """The plan cannot be written as SQL over this model; the message says why."""


def _col(table: str, column: str) -> exp.Column:
    return exp.column(column, table=table, quoted=True)


def _lit(value: object) -> exp.Expression:
    if isinstance(value, bool):
        return exp.Literal.number(int(value))
    if isinstance(value, (int, float)):
        return exp.Literal.number(int(value) if float(value).is_integer() else value)
    return exp.Literal.string(str(value))


def _code(dim: Dimension, code: str) -> exp.Expression:
    return exp.Literal.number(int(code)) if dim.numeric else exp.Literal.string(code)


def _path(model: Model, start: str, goal: str) -> list[tuple[Join, bool]]:
    """Joins from `start` to `goal`, each with True when it goes from the many side to the one side."""
    seen = {start}
    todo: deque[tuple[str, list[tuple[Join, bool]]]] = deque([(start, [])])
    while todo:
        table, steps = todo.popleft()
        if table == goal:
            return steps
        for join in model.joins:
            for here, there, up in ((join.many_table, join.one_table, True), (join.one_table, join.many_table, False)):
                if here == table and there not in seen:
                    seen.add(there)
                    todo.append((there, [*steps, (join, up)]))
    raise PlanError(f"the model does not say how {start} and {goal} go together")


_COMPARE = {">": exp.GT, ">=": exp.GTE, "<": exp.LT, "<=": exp.LTE, "=": exp.EQ}


def build(model: Model, plan: Plan) -> exp.Select:
    ent = plan.entity
    base = ent.table
    number = model.numbers.get(plan.number) if plan.number else None
    needed = [f.dimension.table for f in plan.filters]
    if isinstance(plan.group, Dimension):
        needed.append(plan.group.table)
    if plan.group == PERSON_GROUP:
        needed.append(model.entities["employee"].table)
    if number is not None:
        needed.append(number.table)
    joins: list[tuple[Join, bool]] = []
    for table in dict.fromkeys(needed):
        if table != base:
            for step in _path(model, base, table):
                if step not in joins:
                    joins.append(step)
    fans_out = any(not up for _, up in joins)  # a join to a many side repeats the counted rows
    conditions: list[exp.Expression] = [exp.EQ(this=_col(base, c), expression=_lit(v)) for c, v in ent.where.items()]
    for f in plan.filters:
        conditions.append(exp.EQ(this=_col(f.dimension.table, f.dimension.column), expression=_code(f.dimension, f.code)))
    if plan.range is not None and ent.time:
        conditions.append(exp.GTE(this=_col(base, ent.time), expression=exp.Literal.string(plan.range.start.isoformat())))
        conditions.append(exp.LT(this=_col(base, ent.time), expression=exp.Literal.string(plan.range.end.isoformat())))
    if plan.compare is not None and plan.compare_on == "number" and number is not None:
        op, n = plan.compare
        conditions.append(_COMPARE[op](this=_col(number.table, number.column), expression=_lit(n)))

    person = _col(base, ent.person) if ent.person else None
    if plan.count == "number" and number is not None:
        inner: exp.Expression = _col(number.table, number.column)
        func = {"avg": exp.Avg, "sum": exp.Sum, "min": exp.Min, "max": exp.Max}.get(plan.agg, exp.Avg)
        measure: exp.Expression = func(this=inner)
        if plan.agg == "avg":
            measure = exp.Round(this=measure, decimals=exp.Literal.number(2))
    elif plan.count == "people" and person is not None:
        measure = exp.Count(this=exp.Distinct(expressions=[person]))
    elif fans_out and person is not None:
        measure = exp.Count(this=exp.Distinct(expressions=[person]))
    else:
        measure = exp.Count(this=exp.Star())

    query = exp.select().from_(exp.Table(this=exp.to_identifier(base, quoted=True)))
    for join, up in joins:
        here, there = (join.many_table, join.one_table) if up else (join.one_table, join.many_table)
        on_here, on_there = (join.many_column, join.one_column) if up else (join.one_column, join.many_column)
        query = query.join(exp.Table(this=exp.to_identifier(there, quoted=True)),
                           on=exp.EQ(this=_col(here, on_here), expression=_col(there, on_there)))
    where = exp.and_(*conditions) if conditions else None

    if plan.compare is not None and plan.compare_on == "per_person":
        if person is None:
            raise PlanError(f"{ent.says} are not counted per person")
        if plan.group is not None:
            raise PlanError("I cannot group a count of people over a threshold; ask for one number")
        op, n = plan.compare
        inner_q = query.select(person.copy()).group_by(person.copy()).having(
            _COMPARE[op](this=exp.Count(this=exp.Star()), expression=_lit(n)))
        if where is not None:
            inner_q = inner_q.where(where)
        return exp.select(exp.Count(this=exp.Star()).as_(MEASURE)).from_(inner_q.subquery("per_person"))

    if where is not None:
        query = query.where(where)
    if isinstance(plan.group, Dimension):
        key = _col(plan.group.table, plan.group.column)
        query = query.select(key.as_("code"), measure.as_(MEASURE)).group_by(key.copy())
    elif plan.group == PERSON_GROUP:
        people = model.entities["employee"]
        key = _col(people.table, people.person or "employee_id")
        label = _col(people.table, people.label or people.person or "employee_id")
        query = query.select(key.as_("code"), label.as_("name"), measure.as_(MEASURE)).group_by(key.copy(), label.copy())
    else:
        return query.select(measure.as_(MEASURE))
    if plan.order is not None:
        query = query.order_by(exp.Ordered(this=exp.column(MEASURE), desc=plan.order == "max"))
    else:
        query = query.order_by(exp.Ordered(this=exp.column("code")))
    return query
