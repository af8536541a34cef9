"""The read-only validator: one query, made only of parts known to be harmless.

It parses with sqlglot in the connection's dialect and walks the whole tree, so a
data-changing CTE, `SELECT ... INTO`, a locking clause or a function call buried in a
subquery is found wherever it is. The walk allows node types from a list and refuses
everything else (deny by default): syntax sqlglot falls back to a `Command` for
(PRAGMA, ATTACH, SET, VACUUM, EXPLAIN, LOAD, ...) can never pass. Functions must be on
FUNCTIONS; set_config, pg_read_file, load_extension and their kind are not.
"""

from __future__ import annotations

import logging

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dreamer.contracts.errors import DreamerError

MAX_SQL_CHARS = 20_000
MAX_NODES = 5_000

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its "falling back to Command" warnings are ours to report

# Upper-case names as sqlglot calls them (`Func.sql_name()`), and names of functions it does not model.
# Left out on purpose: padding and repeating functions (LPAD, REPEAT, PRINTF with a width), which
# turn one short value into a gigabyte the kernel would then have to hold.
FUNCTIONS = frozenset(
    """
    COUNT SUM AVG MIN MAX GROUP_CONCAT STRING_AGG COUNT_IF STDDEV STDDEV_POP STDDEV_SAMP VARIANCE VARIANCE_POP
    MEDIAN PERCENTILE_CONT PERCENTILE_DISC BOOL_AND BOOL_OR LOGICAL_AND LOGICAL_OR ARRAY_AGG
    COALESCE NULLIF IF CASE CAST TRY_CAST IFNULL NVL GREATEST LEAST
    LOWER UPPER LENGTH SUBSTRING SUBSTR TRIM LTRIM RTRIM REPLACE CONCAT CONCAT_WS INSTR STR_POSITION
    LEFT RIGHT INITCAP REVERSE SPLIT_PART STARTS_WITH POSITION CHAR_LENGTH
    ROUND ABS CEIL FLOOR MOD POW POWER SQRT LN LOG EXP SIGN TRUNC DIV
    DATE TIME DATETIME JULIANDAY STRFTIME TIME_TO_STR STR_TO_TIME STR_TO_DATE UNIXEPOCH
    DATE_TRUNC TIMESTAMP_TRUNC TIME_TRUNC EXTRACT DATE_PART CURRENT_DATE CURRENT_TIMESTAMP CURRENT_TIME NOW
    DATE_ADD DATE_SUB DATE_DIFF DATEDIFF TS_OR_DS_ADD TS_OR_DS_TO_DATE TS_OR_DS_TO_TIMESTAMP TS_OR_DS_DIFF
    TO_CHAR TO_DATE TO_TIMESTAMP AGE MAKE_DATE YEAR MONTH DAY DAY_OF_WEEK DAY_OF_MONTH DAY_OF_YEAR WEEK QUARTER
    TIMESTAMP_ADD TIMESTAMP_SUB TIMESTAMP_DIFF DATE_FROM_PARTS
    ROW_NUMBER RANK DENSE_RANK PERCENT_RANK CUME_DIST NTILE LAG LEAD FIRST_VALUE LAST_VALUE NTH_VALUE
    """.split()
)

# Node types a read-only query is made of. Anything else is refused with its name.
_ALLOWED: tuple[type[exp.Expr], ...] = (
    exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Subquery, exp.With, exp.CTE, exp.TableAlias,
    exp.Table, exp.Identifier, exp.Column, exp.Star, exp.Alias, exp.Literal, exp.Null, exp.Boolean,
    exp.From, exp.Join, exp.Where, exp.Group, exp.Having, exp.Order, exp.Ordered, exp.Limit, exp.Offset,
    exp.Distinct, exp.Paren, exp.Tuple, exp.Case, exp.If, exp.Window, exp.WindowSpec, exp.Lateral,
    exp.Exists, exp.Any, exp.All, exp.DataType, exp.DataTypeParam, exp.Interval, exp.Var, exp.Binary,
    exp.Unary, exp.Predicate, exp.Between, exp.In, exp.Is, exp.Not, exp.Neg, exp.Qualify, exp.Func,
    exp.Filter, exp.WithinGroup, exp.Placeholder, exp.Escape, exp.Cast, exp.Bracket, exp.Array,
    exp.Columns if hasattr(exp, "Columns") else exp.Column,
)
# Never, wherever they appear (some are Func or Binary subclasses, which the list above allows).
_REFUSED: tuple[type[exp.Expr], ...] = (
    exp.Command, exp.Pragma, exp.Attach, exp.Detach, exp.Copy, exp.Insert, exp.Update, exp.Delete,
    exp.Merge, exp.Create, exp.Drop, exp.Alter, exp.Set, exp.Transaction, exp.Commit, exp.Rollback,
    exp.Into, exp.Lock, exp.Use, exp.Placeholder, exp.Parameter, exp.SessionParameter, exp.Values,
    exp.Unnest, exp.Describe, exp.Kill, exp.Grant, exp.Analyze if hasattr(exp, "Analyze") else exp.Command,
)


def refuse(message: str) -> DreamerError:
    return DreamerError("sql_refused", message)


def parse_query(sql: str, dialect: str) -> exp.Query:
    """The one read-only query in `sql`, checked; sql_refused in one sentence otherwise."""
    if not isinstance(sql, str) or not sql.strip():
        raise refuse("the SQL is empty; write one SELECT query")
    if len(sql) > MAX_SQL_CHARS:
        raise refuse(f"the SQL is longer than {MAX_SQL_CHARS} characters; write a shorter query")
    if "\x00" in sql:
        raise refuse("the SQL contains a NUL character")
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (SqlglotError, RecursionError, ValueError) as exc:
        first = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise refuse(f"the SQL could not be parsed ({first}); write one plain SELECT query") from None
    if len(statements) != 1:
        raise refuse(f"send exactly one statement, not {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, (exp.Select, exp.SetOperation)):
        raise refuse(f"only queries (SELECT) may run; this is a {_kind(tree)} statement")
    check_tree(tree)
    return tree


def check_tree(tree: exp.Expr) -> None:
    count = 0
    for node in tree.walk():
        count += 1
        if count > MAX_NODES:
            raise refuse(f"the query is too large (more than {MAX_NODES} parts); split it up")
        if isinstance(node, _REFUSED) or not isinstance(node, _ALLOWED):
            raise refuse(f"{_kind(node)} is not allowed in a read-only query")
        if isinstance(node, exp.Func) and not isinstance(node, (exp.Binary, exp.Unary, exp.Predicate)):
            name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
            if name.upper() not in FUNCTIONS:
                raise refuse(f"the function {name[:60]} is not on the list of functions queries may use")
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
            raise refuse("schema-qualified function calls are not allowed; call functions by their plain name")
        if isinstance(node, exp.Table) and not isinstance(node.this, exp.Identifier):
            raise refuse("only tables may follow FROM or JOIN (no table functions)")
        if isinstance(node, exp.Select) and (node.args.get("into") or node.args.get("locks")):
            raise refuse("SELECT INTO and locking clauses are not allowed in a read-only query")


def _kind(node: exp.Expr) -> str:
    if isinstance(node, exp.Command):
        return str(node.this).upper()[:30] or "COMMAND"
    return node.key.upper()
