"""A role's rule for one table as SQL, built as a sqlglot tree (never by pasting text).

The same builder serves the application layer (a filtered subquery in place of each
base table), SQLite's secured views and PostgreSQL's row-level-security policies.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dreamer.kernel.data.scopes import Role, Rule

# The real table for a name: `main.employees`, `"hr"."employees"`, `temp.employees`.
Source = Callable[[str], exp.Table]


def literal(value: str | int | float) -> exp.Expression:
    return exp.Literal.string(value) if isinstance(value, str) else exp.Literal.number(value)


def condition(role: Role, table: str, source: Source) -> exp.Expression | None:
    """The WHERE condition for `table` under `role`; None when every row is visible."""
    rule: Rule = role.rules[table]
    if rule.kind == "all":
        return None
    column = exp.column(rule.column, quoted=True)
    if rule.kind == "values":
        return exp.In(this=column, expressions=[literal(v) for v in rule.values])
    inner = exp.select(exp.column(rule.ref_column, quoted=True)).from_(secured(role, rule.ref_table, source).subquery("s"))
    return exp.In(this=column, query=exp.Subquery(this=inner))


def secured(role: Role, table: str, source: Source) -> exp.Select:
    """`SELECT * FROM <real table> WHERE <rule>`: the rows of `table` the role may see."""
    query = exp.select(exp.Star()).from_(source(table))
    cond = condition(role, table, source)
    return query.where(cond) if cond is not None else query


def policy_condition(role: Role, table: str, schema: str) -> exp.Expression:
    """The USING expression of a PostgreSQL policy: references go to the real tables,
    whose own policies filter them again for the same role."""
    rule = role.rules[table]
    if rule.kind == "all":
        return exp.true()
    column = exp.column(rule.column, quoted=True)
    if rule.kind == "values":
        return exp.In(this=column, expressions=[literal(v) for v in rule.values])
    inner = exp.select(exp.column(rule.ref_column, quoted=True)).from_(exp.table_(rule.ref_table, db=schema, quoted=True))
    return exp.In(this=column, query=exp.Subquery(this=inner))
