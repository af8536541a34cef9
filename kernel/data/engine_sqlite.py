"""SQLite's engine layer: a read-only connection that can read only the secured views.

The database file is opened read-only (`mode=ro`). For the reader's role, each
visible table gets a temp object of the same name holding the role's rows; SQLite
resolves an unqualified name to the temp schema first, so `employees` means the
secured one. A table the role sees in full is a TEMP VIEW; a filtered table is a TEMP
TABLE the kernel fills with the role's rows before the query runs (issue 14 finding 2).
A view would not do: SQLite flattens it and may test the query's own condition first
(an index-covered one especially), so `abs(CASE WHEN hidden_value = X THEN min_int END)`
raised "integer overflow" exactly when a hidden row matched. With the rows copied out,
no condition the user wrote ever sees a row outside the scope; only the tables the query
reads (and those their rules depend on) are filled. Then an authorizer is installed that allows:
- reading a column of `main` only when the read happens inside one of those views
  (SQLite names the responsible view in the callback), so `main.employees` is refused;
- reading no column ("") of a table the role sees unfiltered (count(*) after SQLite
  flattened the view into the query, when it no longer names the view);
- reading the temp views themselves (not `sqlite_temp_master`, which holds the filters);
- SELECT, and calls of functions on the validator's list; nothing else (no PRAGMA,
  ATTACH, writes, temp objects of the query's own, recursive triggers).
This layer is sufficient without the application layer: raw SQL run here sees only
the role's rows. The application layer targets `temp.<table>` so both filters apply.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any
from collections.abc import Callable, Iterable
from pathlib import Path

from sqlglot import exp

from dreamer.kernel.data.caps import capped
from dreamer.kernel.data.filters import secured
from dreamer.kernel.data.scopes import Role
from dreamer.kernel.data.validator import FUNCTIONS
from dreamer.contracts.errors import DreamerError

log = logging.getLogger("dreamer.data")
# One sentence for every error raised while rows are read: its detail (which value overflowed,
# which string was too long) could depend on the data, so it goes to the kernel log only.
RUNTIME_ERROR = ("the query failed while reading rows (for example a division by zero, an overflow or a bad "
                 "cast); check the expressions it computes")
TIMEOUT = "the query did more work than allowed and was stopped; narrow it down (filters, fewer joins)"

_FUNCTION_NAMES = frozenset(f.lower() for f in FUNCTIONS) | {
    # SQLite's own names for what sqlglot spells differently, and what it calls internally.
    "strftime", "substr", "ifnull", "iif", "group_concat", "instr", "unixepoch", "julianday",
    "count", "like", "glob", "coalesce", "nullif", "typeof", "date", "time", "datetime", "max", "min",
}
MAX_VM_STEPS = 50_000_000  # a runaway query is interrupted (progress handler) rather than left to spin
MAX_VALUE_BYTES = 1_000_000  # no string or blob grows past this (nested REPLACE, GROUP_CONCAT over a cross join)


def main_table(name: str) -> exp.Table:
    return exp.table_(name, db="main", quoted=True)


def temp_table(name: str) -> exp.Table:
    return exp.table_(name, db="temp", quoted=True)


def needed(role: Role, tables: Iterable[str] | None) -> set[str]:
    """The tables a query over `tables` reads, with those their `in:` rules depend on."""
    todo = list(role.rules if tables is None else (t for t in tables if t in role.rules))
    out: set[str] = set()
    while todo:
        table = todo.pop()
        if table not in out:
            out.add(table)
            rule = role.rules[table]
            if rule.kind == "in":
                todo.append(rule.ref_table)
    return out


def open_secured(path: Path, role: Role, tables: Iterable[str] | None = None) -> sqlite3.Connection:
    """A connection to `path` on which only `role`'s rows can be read, by any SQL.

    `tables`: the tables the query will read (the guard knows them); None fills every one."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        views = needed(role, tables)
        for table in sorted(views):
            body = secured(role, table, main_table).sql(dialect="sqlite")
            kind = "VIEW" if role.rules[table].kind == "all" else "TABLE"
            # The filter reads main.* only, so the order of filling does not matter.
            conn.execute(f'CREATE TEMP {kind} "{table}" AS {body}')
        unfiltered = {t for t in views if role.rules[t].kind == "all"}
        conn.set_authorizer(_authorizer(views, unfiltered))
        steps = {"n": 0}

        def progress() -> int:
            steps["n"] += 1000
            return 1 if steps["n"] > MAX_VM_STEPS else 0

        conn.set_progress_handler(progress, 1000)
    except BaseException:
        conn.close()
        raise
    return conn


def _authorizer(views: set[str], unfiltered: set[str]) -> Callable[[int, str | None, str | None, str | None, str | None], int]:
    ok, deny = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY

    def check(action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None) -> int:
        if action == sqlite3.SQLITE_SELECT:
            return ok
        if action == sqlite3.SQLITE_READ:
            table = (arg1 or "").lower()
            # An unqualified name (db None: SQLite names no schema when no column is read) finds
            # the temp object of that name first, and every table in `views` has one.
            if db in ("temp", None) and table in views:
                return ok
            if db == "main" and source is not None and source.lower() in views:
                return ok
            # A table whose columns are not used (count(*) over a flattened view) is read as
            # column "" with no view named; that reveals only how many rows there are, which
            # is harmless only where the role sees every row.
            if db == "main" and not arg2 and table in unfiltered:
                return ok
            return deny
        if action == sqlite3.SQLITE_FUNCTION:
            return ok if (arg2 or "").lower() in _FUNCTION_NAMES else deny
        if action == sqlite3.SQLITE_RECURSIVE:
            return ok
        return deny

    return check


def run(conn: sqlite3.Connection, query: str, max_rows: int,
        max_bytes: int | None = None) -> tuple[list[str], list[tuple[Any, ...]], bool]:
    """Run `query` on a secured connection: (columns, rows, truncated).

    It is compiled first (EXPLAIN runs no row): an error there depends only on the SQL and
    the schema, so its words go back (a model reads them to correct its SQL). Any error
    after that is the generic RUNTIME_ERROR sentence, and a stop by the step limit is TIMEOUT."""
    try:
        conn.execute("EXPLAIN " + query).fetchall()
    except sqlite3.Error as exc:
        if "interrupted" in str(exc):
            raise DreamerError("timeout", TIMEOUT) from None
        message = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        raise DreamerError("sql_error", f"the database refused the query: {message}") from None
    try:
        cur = conn.execute(query)
        columns = [d[0] for d in cur.description or []]
        rows, truncated = capped(iter(cur.fetchone, None), max_rows, max_bytes)
    except sqlite3.Error as exc:
        if "interrupted" in str(exc):
            raise DreamerError("timeout", TIMEOUT) from None
        log.info("SQLite query failed while reading rows: %s", exc)
        raise DreamerError("sql_error", RUNTIME_ERROR) from None
    return columns, rows, truncated
