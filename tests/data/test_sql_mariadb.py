"""A database served by the application layer alone (MariaDB here, as MySQL): the same
bypass techniques as tests/data/test_sql_security.py, with MySQL's own on top, as the scoped
manager; every query is refused or answers exactly what it answers on the truth copy."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from hr_testkit import ANCHOR, HIDE
from test_sql_security import HOSTILE, LEGIT, _rows

from dreamer.kernel.data.connection import build, jsonable, parse_url
from dreamer.kernel.data.demo import SCHEMA, SCOPES_FILE, demo_rows
from dreamer.kernel.data.rewriter import guard
from dreamer.contracts.errors import DreamerError

pymysql = pytest.importorskip("pymysql")

MYSQL_HOSTILE = [
    "SELECT LOAD_FILE('/etc/passwd')",
    "SELECT * FROM employees INTO OUTFILE '/tmp/stolen.csv'",
    "SELECT SLEEP(5)",
    "SELECT BENCHMARK(100000000, MD5('x'))",
    "SELECT COUNT(*) FROM information_schema.tables",
    "SELECT COUNT(*) FROM mysql.user",
    "SHOW TABLES",
    "SET @x = (SELECT COUNT(*) FROM employees)",
    "SELECT COUNT(*) FROM `EMPLOYEES`",
    "SELECT COUNT(*) FROM `{s}`.`employees` WHERE 1 = 1 # WHERE department = 'D042'",
    "HANDLER employees OPEN",
    "SELECT COUNT(*) FROM employees FOR UPDATE",
]


def _server() -> Any:
    try:
        return pymysql.connect(host="127.0.0.1", port=3306, user="root", password="", connect_timeout=3, autocommit=True)
    except pymysql.err.OperationalError:
        pytest.skip("MariaDB does not answer at 127.0.0.1:3306")


@pytest.fixture(scope="module")
def mariadb() -> Iterator[tuple[Any, str, str]]:
    """(the connection under test, the data's database, the truth's database)."""
    server = _server()
    name = f"dreamer_sqlx_{secrets.token_hex(4)}"
    truth = f"{name}_truth"
    ddl = SCHEMA.replace("TEXT", "VARCHAR(200)").split(";")
    rows = demo_rows(ANCHOR)
    try:
        with server.cursor() as cur:
            for db in (name, truth):
                cur.execute(f"CREATE DATABASE `{db}`")
                cur.execute(f"USE `{db}`")
                for statement in ddl:
                    if statement.strip() and "CREATE INDEX" not in statement:
                        cur.execute(statement)
                for table, values in rows.items():
                    marks = ", ".join(["%s"] * len(values[0]))
                    cur.executemany(f"INSERT INTO `{table}` VALUES ({marks})", values)
            cur.execute(f"USE `{truth}`")
            cur.execute("SET FOREIGN_KEY_CHECKS = 0")  # employees refer to their managers
            for table, hidden in HIDE.items():
                cur.execute(f"DELETE FROM {table} WHERE {hidden}")
        conn = build("hr", f"mysql+pymysql://root@127.0.0.1:3306/{name}", name, "", SCOPES_FILE.read_text(), {})
        yield conn, name, truth
    finally:
        with server.cursor() as cur:
            for db in (name, truth):
                cur.execute(f"DROP DATABASE IF EXISTS `{db}`")
        server.close()


def _mysql(sql: str) -> str:
    # MySQL quotes names with backticks; a double-quoted word is a string there.
    return sql.replace('"', "`")


def _truth(truth: str, sql: str) -> list[str] | None:
    server = _server()
    try:
        with server.cursor() as cur:
            cur.execute(f"USE `{truth}`")
            cur.execute(sql.replace("{s}", truth))
            # As the secured path hands values on (Decimal sums as numbers, dates as text).
            return _rows([[jsonable(v) for v in row] for row in cur.fetchall()])
    except pymysql.err.Error:
        return None
    finally:
        server.close()


def _secured(conn: Any, name: str, sql: str, user: str = "ops_manager") -> list[str] | str:
    role = conn.role_for(user)
    try:
        guarded = guard(sql.replace("{s}", name), role, conn.target, conn.source)
        return _rows(conn.execute(role, guarded.secured, 100_000)[1])
    except DreamerError as exc:
        return f"refused: {exc.code}"


def test_the_url_is_accepted_as_application_layer_only(mariadb: tuple[Any, str, str]) -> None:
    conn, name, _ = mariadb
    assert conn.dialect == "mysql" and conn.layers == "application only"
    assert parse_url(f"mysql+pymysql://root@127.0.0.1/{name}")[1] == name
    with pytest.raises(DreamerError) as caught:
        parse_url("firebird://someone@host/db")
    assert caught.value.code == "not_available" and "\n" not in caught.value.message


def test_hostile_queries_never_return_hidden_rows(mariadb: tuple[Any, str, str]) -> None:
    conn, name, truth = mariadb
    leaks, refused = [], 0
    for sql in [_mysql(q) for q in HOSTILE] + MYSQL_HOSTILE:
        got = _secured(conn, name, sql)
        if isinstance(got, str):
            refused += 1
            continue
        expected = _truth(truth, sql)
        if got != expected:
            leaks.append((sql, got[:3], (expected or [])[:3]))
    assert leaks == []
    assert refused >= len(MYSQL_HOSTILE)  # MySQL's own tricks are refused outright, not merely filtered


def test_legitimate_queries_answer_within_scope(mariadb: tuple[Any, str, str]) -> None:
    conn, name, truth = mariadb
    wrong = []
    for sql in (_mysql(q) for q in LEGIT):
        got, expected = _secured(conn, name, sql), _truth(truth, sql)
        assert expected, sql  # the oracle answers, and the query is not vacuous
        if got != expected:
            wrong.append((sql, got if isinstance(got, str) else got[:3], expected[:3]))
    assert wrong == []


def test_the_check_sees_a_leak_when_the_role_is_wider(mariadb: tuple[Any, str, str]) -> None:
    """Not vacuous: hr_admin's answers differ from ops_manager's truth."""
    conn, name, truth = mariadb
    sql = "SELECT COUNT(*) FROM employees"
    assert _secured(conn, name, sql, "hr_admin") != _truth(truth, sql)
    assert _secured(conn, name, sql) == _truth(truth, sql)
