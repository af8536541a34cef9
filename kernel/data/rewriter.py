"""The scope rewriter: every base table of a query becomes the rows its reader may see.

Base tables are found by sqlglot's scope analysis (`traverse_scope`), which follows
CTEs, derived tables, subqueries in SELECT and WHERE, UNION branches and LATERAL
joins, and tells a reference to a CTE apart from a real table. Each base table node
is replaced in place by a filtered subquery (`filters.secured`) under the alias the
query used, so self-joins and correlated references keep working. Refused: a CTE
named like a real table (it would be read as one where the CTE is out of scope), a
table outside the reader's role (refused with the same words as a table that does not
exist, so names are not confirmed), a schema other than the connection's, and any
table node the analysis could not place.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from dreamer.kernel.data.filters import Source, secured
from dreamer.kernel.data.scopes import Role
from dreamer.kernel.data.validator import parse_query, refuse

_SYSTEM_PREFIXES = ("sqlite_", "pg_", "information_schema")


@dataclass(frozen=True)
class Target:
    """What the rewriter needs to know about the connection."""

    dialect: str  # sqlglot dialect: "sqlite", "postgres", "tsql", ...
    schemas: frozenset[str]  # qualifiers a query may use for its tables ("main"; "public")
    tables: frozenset[str]  # the connection's real tables, lower case


@dataclass(frozen=True)
class Guarded:
    written: str
    secured: str
    tables: tuple[str, ...]  # base tables the query reads, lower case


def canonical(table: exp.Table, dialect: str) -> str:
    ident = table.this
    name = ident.name if isinstance(ident, exp.Identifier) else str(ident)
    # SQLite ignores case even when quoted; elsewhere only unquoted names fold.
    quoted = isinstance(ident, exp.Identifier) and ident.quoted and dialect != "sqlite"
    return name if quoted else name.lower()


def guard(sql: str, role: Role | None, target: Target, source: Source) -> Guarded:
    """Validate `sql` and rewrite it for `role`; sql_refused in one sentence when it cannot be run."""
    tree = parse_query(sql, target.dialect)
    if role is None:
        raise refuse("you have no scope on this connection, so no query can run; ask the administrator for one")
    tables = secure_tree(tree, role, target, source)
    return Guarded(sql, tree.sql(dialect=target.dialect, comments=False), tuple(sorted(set(tables))))


def secure_tree(tree: exp.Expr, role: Role, target: Target, source: Source) -> list[str]:
    cte_names = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for name in cte_names:
        if name in target.tables or name.startswith(_SYSTEM_PREFIXES):
            raise refuse(f"a CTE may not be named {name!r} like a table; choose another name")
    try:
        scopes: list[Scope] = traverse_scope(tree)
    except (SqlglotError, RecursionError, KeyError, ValueError) as exc:
        raise refuse(f"the query's structure could not be analysed ({type(exc).__name__}); write it more simply") from None
    base: dict[int, exp.Table] = {}
    placed: set[int] = set()
    for scope in scopes:
        for table in scope.tables:
            source_of = scope.sources.get(table.alias_or_name)
            if source_of is table:
                base[id(table)] = table
            elif isinstance(source_of, Scope) and not table.db and table.name.lower() in cte_names:
                pass  # a reference to a CTE the analysis resolved
            else:
                continue
            placed.add(id(table))
    for table in tree.find_all(exp.Table):
        if id(table) not in placed:
            raise refuse(f"could not tell where {table.sql(target.dialect)[:60]} comes from; give each table its own alias")
    read: list[str] = []
    for table in base.values():
        name = _check_table(table, role, target)
        read.append(name)
        alias = table.args.get("alias")
        if alias is None:
            alias = exp.TableAlias(this=exp.to_identifier(table.name, quoted=True))
        rows = secured(role, name, source)
        if target.dialect == "postgres" and role.rules[name].kind != "all":
            # OFFSET 0 keeps PostgreSQL from pushing the query's own conditions into the filtered
            # subquery, where they could run on rows outside the scope (row-level security fences
            # them too; this layer must hold on its own).
            rows = rows.offset(0)
        replacement = exp.Subquery(this=rows, alias=alias.copy())
        table.replace(replacement)
    return read


def _check_table(table: exp.Table, role: Role, target: Target) -> str:
    name = canonical(table, target.dialect)
    for part in (table.args.get("catalog"), table.args.get("db")):
        if part is not None and part.name.lower() not in target.schemas and part.name not in target.schemas:
            raise refuse(f"only the tables of this connection may be read, not {table.sql(target.dialect)[:60]}")
    if table.args.get("catalog") is not None and target.dialect == "sqlite":
        raise refuse(f"only the tables of this connection may be read, not {table.sql(target.dialect)[:60]}")
    if name not in target.tables or name not in role.rules:
        raise refuse(f"there is no table {name[:60]!r} among the tables you may query (list_tables shows them)")
    return name
