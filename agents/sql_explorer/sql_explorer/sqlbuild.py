"""A compiled plan as one SQL query, built as a sqlglot tree (never by pasting text).

Tables are joined along the model's joins (from the counted table to the ones its
filters and groups live in); a path the model does not have is PlanError, said in one
sentence. The query then goes to the kernel like any other: validator, scope rewriter,
engine layer. Its columns: `code` (and `code2` for a second grouping, `name` for people)
then `value`.
"""

from __future__ import annotations

from collections import deque

from sqlglot import exp

from dreamer.sdk.semantic import Dimension, Join, Model

from sql_explorer.plan import PERSON_GROUP, Group, Plan, TimeGroup

MEASURE = "value"
_COMPARE = {">": exp.GT, ">=": exp.GTE, "<": exp.LT, "<=": exp.LTE, "=": exp.EQ}


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


def _conditions(plan: Plan, number_col: exp.Column | None) -> list[exp.Expression]:
    ent = plan.entity
    out: list[exp.Expression] = [exp.EQ(this=_col(ent.table, c), expression=_lit(v)) for c, v in ent.where.items()]
    for f in plan.filters:
        out.append(exp.EQ(this=_col(f.dimension.table, f.dimension.column), expression=_code(f.dimension, f.code)))
    if plan.range is not None and ent.time:
        out.append(exp.GTE(this=_col(ent.table, ent.time), expression=exp.Literal.string(plan.range.start.isoformat())))
        out.append(exp.LT(this=_col(ent.table, ent.time), expression=exp.Literal.string(plan.range.end.isoformat())))
    if plan.compare_on == "number" and number_col is not None:
        out += [_COMPARE[op](this=number_col.copy(), expression=_lit(n)) for op, n in plan.compare]
    return out


def _keys(model: Model, plan: Plan) -> list[tuple[str, exp.Expression]]:
    """(output name, expression) for each grouping: code / code2, and name for people."""
    out: list[tuple[str, exp.Expression]] = []
    for i, group in enumerate(plan.groups):
        alias = "code" if i == 0 else "code2"
        out.append((alias, _key(model, plan, group)))
        if group == PERSON_GROUP:
            people = model.entities["employee"]
            out.append(("name", _col(people.table, people.label or people.person or "employee_id")))
    return out


def _key(model: Model, plan: Plan, group: Group) -> exp.Expression:
    if isinstance(group, Dimension):
        return _col(group.table, group.column)
    if isinstance(group, TimeGroup):  # the date as text, cut to YYYY-MM or YYYY (text or date columns alike)
        time = _col(plan.entity.table, plan.entity.time or "")
        return exp.Substring(this=exp.Cast(this=time, to=exp.DataType.build("text")),
                             start=exp.Literal.number(1), length=exp.Literal.number(group.width))
    people = model.entities["employee"]
    return _col(people.table, people.person or "employee_id")


def build(model: Model, plan: Plan) -> exp.Select:
    ent = plan.entity
    base = ent.table
    number = model.numbers.get(plan.number) if plan.number else None
    needed = [f.dimension.table for f in plan.filters]
    needed += [g.table for g in plan.groups if isinstance(g, Dimension)]
    if PERSON_GROUP in plan.groups:
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
    number_col = _col(number.table, number.column) if number is not None else None
    conditions = _conditions(plan, number_col)

    person = _col(base, ent.person) if ent.person else None
    if plan.count == "number" and number_col is not None:
        func = {"avg": exp.Avg, "sum": exp.Sum, "min": exp.Min, "max": exp.Max}.get(plan.agg, exp.Avg)
        measure: exp.Expression = func(this=number_col.copy())
        if plan.agg == "avg":
            measure = exp.Round(this=measure, decimals=exp.Literal.number(2))
    elif (plan.count == "people" or fans_out) and person is not None:
        measure = exp.Count(this=exp.Distinct(expressions=[person]))
    else:
        measure = exp.Count(this=exp.Star())

    query = exp.select().from_(exp.Table(this=exp.to_identifier(base, quoted=True)))
    for join, up in joins:
        here, there = (join.many_table, join.one_table) if up else (join.one_table, join.many_table)
        on_here, on_there = (join.many_column, join.one_column) if up else (join.one_column, join.many_column)
        query = query.join(exp.Table(this=exp.to_identifier(there, quoted=True)),
                           on=exp.EQ(this=_col(here, on_here), expression=_col(there, on_there)))
    if conditions:
        query = query.where(exp.and_(*conditions))

    if plan.compare_on == "per_person":
        if person is None:
            raise PlanError(f"{ent.says} are not counted per person")
        if plan.groups:
            raise PlanError("I cannot group a count of people over a threshold; ask for one number")
        inner = query.select(person.copy()).group_by(person.copy()).having(
            exp.and_(*[_COMPARE[op](this=exp.Count(this=exp.Star()), expression=_lit(n)) for op, n in plan.compare]))
        return exp.select(exp.Count(this=exp.Star()).as_(MEASURE)).from_(inner.subquery("per_person"))
    keys = _keys(model, plan)
    if not keys:
        return query.select(measure.as_(MEASURE))
    query = query.select(*[expr.as_(alias) for alias, expr in keys], measure.as_(MEASURE))
    query = query.group_by(*[expr.copy() for _, expr in keys])
    if plan.compare_on == "per_group":  # "departments with fewer than 12 employees"
        query = query.having(exp.and_(*[_COMPARE[op](this=measure.copy(), expression=_lit(n))
                                        for op, n in plan.compare]))
        if plan.count_groups:
            return exp.select(exp.Count(this=exp.Star()).as_(MEASURE)).from_(query.subquery("per_group"))
    if plan.order is not None:
        # Best first; ties in a stable order, so "top 3" names the same three every time.
        return query.order_by(exp.Ordered(this=exp.column(MEASURE), desc=plan.order == "max"),
                              exp.Ordered(this=exp.column("code")))
    return query.order_by(*[exp.Ordered(this=exp.column(alias)) for alias, _ in keys if alias != "name"])
