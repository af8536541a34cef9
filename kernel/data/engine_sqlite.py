"""SQLite's engine layer: a read-only connection that can read only the secured views.

The database file is opened read-only (`mode=ro`). For the reader's role, each
visible table gets a TEMP VIEW of the same name holding the role's rows; SQLite
resolves an unqualified name to the temp schema first, so `employees` means the
secured view. Then an authorizer is installed that allows:
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

import sqlite3
from collections.abc import Callable
from pathlib import Path

from sqlglot import exp

from dreamer.kernel.data.filters import secured
from dreamer.kernel.data.scopes import Role
from dreamer.kernel.data.validator import FUNCTIONS

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


def open_secured(path: Path, role: Role) -> sqlite3.Connection:
    """A connection to `path` on which only `role`'s rows can be read, by any SQL."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        views = set(role.rules)
        for table in sorted(views):
            body = secured(role, table, main_table).sql(dialect="sqlite")
            conn.execute(f'CREATE TEMP VIEW "{table}" AS {body}')
        unfiltered = {t for t, rule in role.rules.items() if rule.kind == "all"}
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
            if db == "temp" and table in views:
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
