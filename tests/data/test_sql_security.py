"""Bypass techniques against the SQL guard, as the scoped manager ops_manager, on SQLite and
PostgreSQL, through each layer alone and through both: every query is refused or answers
exactly what the same SQL answers over only the rows the role may see (the truth copy)."""

from __future__ import annotations

import sqlite3
from typing import Any

import psycopg
import pytest
from sqlglot import exp

from dreamer.kernel.data import engine_pg
from dreamer.kernel.data.engine_sqlite import main_table, open_secured
from dreamer.kernel.data.rewriter import guard
from dreamer.contracts.errors import DreamerError

from hr_testkit import Demo

# {s} is the schema: main on SQLite, the data's schema on PostgreSQL (the truth's for the oracle).
LEGIT = [
    "SELECT COUNT(*) FROM employees",
    "SELECT department, COUNT(*), AVG(salary) FROM employees GROUP BY department",
    "SELECT e.name, m.name FROM employees e LEFT JOIN employees m ON e.manager_id = m.employee_id",
    "WITH a AS (SELECT employee_id FROM absence_records) SELECT COUNT(DISTINCT employee_id) FROM a",
    "WITH RECURSIVE chain(id, depth) AS (SELECT employee_id, 0 FROM employees WHERE manager_id IS NULL "
    "UNION ALL SELECT e.employee_id, c.depth + 1 FROM employees e JOIN chain c ON e.manager_id = c.id) "
    "SELECT COUNT(*), MAX(depth) FROM chain",
    "SELECT name FROM employees WHERE employee_id IN (SELECT employee_id FROM absence_records WHERE reason_code = 'SICK')",
    "SELECT name, (SELECT COUNT(*) FROM absence_records a WHERE a.employee_id = e.employee_id) FROM employees e",
    "SELECT employee_id FROM attendance WHERE status = 'absent' UNION SELECT employee_id FROM absence_records",
    "SELECT employee_id, RANK() OVER (ORDER BY salary DESC) FROM employees",
    "SELECT COUNT(*) FROM employees e WHERE EXISTS (SELECT 1 FROM approved_leave l WHERE l.employee_id = e.employee_id)",
    "SELECT 'employees' AS t, COUNT(*) FROM employees WHERE name <> 'main.employees; DROP TABLE employees'",
    "SELECT COUNT(*) FROM {s}.employees",
    'SELECT COUNT(*) FROM "{s}"."employees"',
    "SELECT a.status, COUNT(DISTINCT a.employee_id) FROM attendance a JOIN employees e ON a.employee_id = e.employee_id "
    "GROUP BY a.status ORDER BY a.status",
]
PG_LEGIT = [
    "SELECT e.name, x.n FROM employees e CROSS JOIN LATERAL "
    "(SELECT COUNT(*) AS n FROM attendance a WHERE a.employee_id = e.employee_id) x",
]
HOSTILE = [
    'SELECT COUNT(*) FROM "EMPLOYEES"',
    "SELECT COUNT(*) FROM employees /* WHERE department = 'D042' */",
    "SELECT COUNT(*) FROM employees -- \n UNION ALL SELECT COUNT(*) FROM {s}.absence_records",
    "SELECT name FROM employees UNION ALL SELECT name FROM {s}.employees",
    "SELECT COUNT(*) FROM employees WHERE employee_id NOT IN (SELECT employee_id FROM {s}.employees)",
    "SELECT (SELECT COUNT(*) FROM {s}.employees), (SELECT SUM(salary) FROM {s}.employees)",
    "WITH employees AS (SELECT * FROM {s}.employees) SELECT COUNT(*) FROM employees",
    "WITH x AS (WITH y AS (SELECT * FROM {s}.employees) SELECT * FROM y) SELECT COUNT(*) FROM x",
    "SELECT COUNT(*) FROM (SELECT * FROM {s}.employees) AS employees",
    "SELECT COUNT(*) FROM employees; SELECT COUNT(*) FROM {s}.employees",
    "WITH d AS (DELETE FROM absence_records RETURNING *) SELECT COUNT(*) FROM d",
    "SELECT * INTO stolen FROM employees",
    "SELECT COUNT(*) FROM employees e JOIN employees e2 ON 1 = 1 WHERE e2.department <> 'D042'",
]
SQLITE_HOSTILE = [
    "PRAGMA table_info(employees)",
    "ATTACH DATABASE '/tmp/stolen.db' AS stolen",
    "SELECT load_extension('/tmp/evil')",
    "SELECT COUNT(*) FROM sqlite_master",
    "SELECT COUNT(*) FROM temp.employees",
]
PG_HOSTILE = [
    "SELECT set_config('dreamer.scope_role', 'hr_admin', true), (SELECT COUNT(*) FROM employees)",
    "SELECT COUNT(*) FROM employees e, LATERAL (SELECT COUNT(*) FROM {s}.employees) x",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT set_config('role', 'postgres', true)",
    "COPY employees TO STDOUT",
    "SELECT COUNT(*) FROM pg_catalog.pg_class",
]
# Refused by the application layer, whatever the engine would do.
MUST_REFUSE = {
    "SELECT COUNT(*) FROM employees; SELECT COUNT(*) FROM {s}.employees",
    "WITH employees AS (SELECT * FROM {s}.employees) SELECT COUNT(*) FROM employees",
    "WITH d AS (DELETE FROM absence_records RETURNING *) SELECT COUNT(*) FROM d",
    "SELECT * INTO stolen FROM employees", "PRAGMA table_info(employees)", "ATTACH DATABASE '/tmp/stolen.db' AS stolen",
    "SELECT load_extension('/tmp/evil')", "SELECT pg_read_file('/etc/passwd')", "COPY employees TO STDOUT",
    "SELECT set_config('dreamer.scope_role', 'hr_admin', true), (SELECT COUNT(*) FROM employees)",
    "SELECT set_config('role', 'postgres', true)", "SELECT COUNT(*) FROM sqlite_master",
}


def _rows(rows: Any) -> list[str]:
    return sorted(repr(tuple(float(v) if hasattr(v, "as_integer_ratio") and not isinstance(v, (int, bool)) else v
                             for v in row)) for row in rows)


def _truth(demo: Demo, sql: str) -> list[str] | None:
    query = sql.replace("{s}", demo.truth if demo.conn.dialect == "postgres" else "main")
    if demo.conn.dialect == "sqlite":
        query = query.replace("temp.employees", "main.employees")  # the secured view is the truth's table
    try:
        if demo.conn.dialect == "sqlite":
            with sqlite3.connect(f"file:{demo.truth}?mode=ro", uri=True) as db:
                return _rows(db.execute(query).fetchall())
        with psycopg.connect(engine_pg.psycopg_dsn(demo.conn.url)) as db:
            db.execute(f"SET search_path = {demo.truth}")
            return _rows(db.execute(query.encode()).fetchall())
    except Exception:  # noqa: BLE001 - the oracle could not answer either
        return None


def _app_only(demo: Demo, sql: str) -> list[str]:
    """The application layer alone: the rewritten SQL on a connection that could read everything."""
    role = demo.conn.role_for("ops_manager")
    if demo.conn.dialect == "sqlite":
        guarded = guard(sql, role, demo.conn.target, main_table)
        with sqlite3.connect(f"file:{demo.conn.path}?mode=ro", uri=True) as db:
            return _rows(db.execute(guarded.secured).fetchall())
    guarded = guard(sql, role, demo.conn.target, lambda t: exp.table_(t, db=demo.schema, quoted=True))
    with psycopg.connect(engine_pg.psycopg_dsn(demo.conn.url)) as db:  # the owner: RLS does not apply
        db.execute("BEGIN READ ONLY")
        return _rows(db.execute(guarded.secured.encode()).fetchall())


def _engine_only(demo: Demo, sql: str) -> list[str]:
    """The engine layer alone: the SQL as the agent wrote it, straight to the secured engine."""
    role = demo.conn.role_for("ops_manager")
    query = sql.replace("{s}", demo.schema)
    if demo.conn.dialect == "sqlite":
        db = open_secured(demo.conn.path, role)
        try:
            return _rows(db.execute(query).fetchall())
        finally:
            db.close()
    url = engine_pg.reader_url(demo.conn.url, demo.conn.secrets["reader"], demo.conn.secrets["password"])
    return _rows(engine_pg.run_as_reader(url, demo.schema, role.name, query, 100_000)[1])


def _both(demo: Demo, sql: str) -> list[str]:
    role = demo.conn.role_for("ops_manager")
    guarded = guard(sql.replace("{s}", demo.schema), role, demo.conn.target, demo.conn.source)
    return _rows(demo.conn.execute(role, guarded.secured, 100_000)[1])


LAYERS = {"app": _app_only, "engine": _engine_only, "both": _both}


def _outcome(layer: str, demo: Demo, sql: str) -> list[str] | str:
    try:
        return LAYERS[layer](demo, sql.replace("{s}", demo.schema))
    except DreamerError as exc:
        return f"refused: {exc.message}"
    except (sqlite3.Error, psycopg.Error) as exc:
        return f"engine refused: {type(exc).__name__}"


def _queries(demo: Demo, *lists: list[str]) -> list[str]:
    extra = {"sqlite": (SQLITE_HOSTILE, []), "postgres": (PG_HOSTILE, PG_LEGIT)}[demo.conn.dialect]
    return [q for group in lists for q in group] + (list(extra[0]) if HOSTILE in lists else list(extra[1]))


@pytest.mark.parametrize("layer", ["app", "engine", "both"])
def test_hostile_queries_never_return_hidden_rows(demo: Demo, layer: str) -> None:
    leaks, answered = [], 0
    for sql in _queries(demo, HOSTILE):
        got = _outcome(layer, demo, sql)
        if isinstance(got, str):
            continue  # refused: nothing came back
        answered += 1
        truth = _truth(demo, sql)
        if got != truth:
            leaks.append((sql, got[:3], (truth or [])[:3]))
    assert leaks == []
    assert answered >= 3  # filtered, not merely refused: quoting, comments, UNION still answer within scope


def test_the_oracle_sees_a_leak_when_the_role_is_wider(demo: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above is not vacuous: with hr_admin's rows behind ops_manager's truth, it finds leaks."""
    wide = demo.conn.role_for("hr_admin")
    monkeypatch.setattr(demo.conn, "role_for", lambda user: wide)
    leaked = [q for q in _queries(demo, HOSTILE) if not isinstance(got := _outcome("both", demo, q), str)
              and got != _truth(demo, q)]
    assert len(leaked) >= 5


@pytest.mark.parametrize("layer", ["app", "engine", "both"])
def test_legitimate_queries_of_every_shape_answer_within_scope(demo: Demo, layer: str) -> None:
    wrong = []
    for sql in _queries(demo, LEGIT):
        if layer == "engine" and demo.conn.dialect == "sqlite" and "{s}" in sql:
            continue  # SQLite's engine layer refuses main.* outright; the application layer maps it to the views
        got, truth = _outcome(layer, demo, sql), _truth(demo, sql)
        assert truth is not None and truth != [], sql  # the oracle answers, and the query is not vacuous
        if got != truth:
            wrong.append((sql, got if isinstance(got, str) else got[:3], truth[:3]))
    assert wrong == []


def test_the_application_layer_refuses_what_is_not_a_plain_scoped_query(demo: Demo) -> None:
    hostile = [q for q in _queries(demo, HOSTILE) if q in MUST_REFUSE]
    assert len(hostile) >= 6
    for sql in hostile:
        got = _outcome("app", demo, sql)
        assert isinstance(got, str) and got.startswith("refused: "), (sql, got)


def test_a_user_the_scopes_file_does_not_name_sees_nothing_and_is_told(demo: Demo) -> None:
    assert demo.conn.role_for("stranger") is None
    with pytest.raises(DreamerError) as err:
        guard("SELECT COUNT(*) FROM employees", None, demo.conn.target, demo.conn.source)
    assert err.value.code == "sql_refused" and "no scope" in err.value.message


def test_hr_admin_sees_every_department(demo: Demo) -> None:
    role = demo.conn.role_for("hr_admin")
    guarded = guard("SELECT COUNT(DISTINCT department) FROM employees", role, demo.conn.target, demo.conn.source)
    assert demo.conn.execute(role, guarded.secured, 10)[1] == [[7]]
