"""Issue 14 finding 2: no condition a scoped user writes is ever evaluated on a row outside
their scope, and no runtime error carries data-dependent words.

Two copies of the demo HR data differ only outside the D042 manager's scope (copy B has
one hidden employee with salary 123457 and a hidden absence on 2001-02-03). Every probe
is a query whose condition errs, overflows, escapes badly, grows a value past the limit
or runs past the step limit *exactly when it sees that hidden row*. The manager's
observations (rows, or error kind and words) must be the same on both copies, on SQLite
and PostgreSQL; an extra index on employees(salary), as in the review, is on both.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

import pytest

from dreamer.kernel.data import engine_pg
from dreamer.kernel.data.demo import SCHEMA, SCOPES_FILE, build_demo, demo_rows
from dreamer.kernel.data.engine_sqlite import RUNTIME_ERROR
from dreamer.kernel.data.queries import DataService
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store

PG_ADMIN_URL = os.environ.get("DREAMER_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
ANCHOR = date(2026, 11, 1)
HIDDEN_ID = 1001  # the first employee, department D010: outside the manager's scope
X = 123457  # no salary in the data is this (they are whole thousands)
D = "2001-02-03"  # no absence in the data is this old
MIN = "-9223372036854775808"
BIG = "x" * 1001  # replace(BIG, 'x', BIG) is 1,002,001 characters: past the 1,000,000 value limit
CHANGES = [  # what copy B has and copy A does not, all outside the scope
    f"UPDATE employees SET salary = {X} WHERE employee_id = {HIDDEN_ID}",
    f"INSERT INTO absence_records VALUES ({HIDDEN_ID}, '{D}', 'SICK', 1)",
]
PROBES = {
    "overflow on an indexed date": "SELECT COUNT(*) FROM absence_records WHERE absence_date > '2000' AND "
                                   f"abs(CASE WHEN absence_date = '{D}' THEN {MIN} ELSE 1 END) > 0",
    "overflow on an indexed salary": "SELECT COUNT(*) FROM employees WHERE salary > 0 AND "
                                     f"abs(CASE WHEN salary = {X} THEN {MIN} ELSE 1 END) > 0",
    "overflow through a join": "SELECT COUNT(*) FROM absence_records a JOIN employees e ON a.employee_id = e.employee_id "
                               f"WHERE abs(CASE WHEN e.salary = {X} THEN {MIN} ELSE 1 END) > 0",
    "overflow in a subquery": "SELECT COUNT(*) FROM employees WHERE employee_id IN (SELECT employee_id FROM employees "
                              f"WHERE abs(CASE WHEN salary = {X} THEN {MIN} ELSE 1 END) > 0)",
    "overflow in a select list": f"SELECT SUM(abs(CASE WHEN salary = {X} THEN {MIN} ELSE 1 END)) FROM employees",
    "division by zero": f"SELECT COUNT(*) FROM employees WHERE salary > 0 AND 1 / (salary - {X}) >= 0",
    "cast": f"SELECT COUNT(*) FROM employees WHERE salary > 0 AND CAST(CASE WHEN salary = {X} THEN 'x' ELSE '1' END "
            "AS INTEGER) > 0",
    # sqlglot reads only a literal after ESCAPE, but the function form takes any expression.
    "like escape": f"SELECT COUNT(*) FROM employees WHERE salary > 0 AND like('%', name, CASE WHEN salary = {X} "
                   "THEN 'ab' ELSE '!' END)",
    "like pattern ending in its escape": "SELECT COUNT(*) FROM employees WHERE salary > 0 AND "
                                         f"name LIKE CASE WHEN salary = {X} THEN 'a!' ELSE 'a' END ESCAPE '!'",
    "length limit": f"SELECT COUNT(*) FROM employees WHERE salary > 0 AND length(CASE WHEN salary = {X} THEN "
                    f"replace('{BIG}', 'x', '{BIG}') ELSE 'a' END) > 0",
    "step limit (timing)": f"SELECT COUNT(*) FROM employees WHERE salary > 0 AND (CASE WHEN salary = {X} THEN "
                           "(SELECT COUNT(*) FROM attendance a, attendance b, attendance c) ELSE 0 END) >= 0",
    "date overflow in a group": "SELECT reason_code, COUNT(*) FROM absence_records WHERE absence_date > '2000' GROUP BY "
                                f"reason_code HAVING SUM(abs(CASE WHEN absence_date = '{D}' THEN {MIN} ELSE 1 END)) > 0",
}


@dataclass
class Pair:
    data: DataService  # the kernel's data service, with connections "copy-a" and "copy-b"


def _observe(data: DataService, copy: str, sql: str, user: str = "ops_manager") -> Any:
    """What `user` learns from one query through the kernel's query path: rows, or the error's kind and words."""
    try:
        return ("rows", data.query(f"copy-{copy}", user, sql, user_id=1).result.rows)
    except DreamerError as exc:
        return ("error", exc.code, exc.message)
    except Exception as exc:  # noqa: BLE001 - an engine error that was not translated is an observation too
        return ("raw error", type(exc).__name__, str(exc))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('kernel') / 'kernel.db'}")
    store.migrate()
    yield store
    store.engine.dispose()


@pytest.fixture(scope="module")
def sqlite_pair(tmp_path_factory: pytest.TempPathFactory, store: Store) -> Iterator[Pair]:
    folder = tmp_path_factory.mktemp("oracle")
    a = build_demo(folder / "a.db", ANCHOR)
    b = folder / "b.db"
    shutil.copy(a, b)
    for path, changes in ((a, []), (b, CHANGES)):
        with sqlite3.connect(path) as db:
            db.execute("CREATE INDEX ix_salary ON employees(salary)")
            for change in changes:
                db.execute(change)
    data = DataService(store)
    for copy, path in (("a", a), ("b", b)):
        data.add(f"copy-{copy}", f"sqlite:///{path}", scopes=SCOPES_FILE.read_text())
    yield Pair(data)
    for copy in "ab":
        data.remove(f"copy-{copy}")


@pytest.fixture(scope="module")
def postgres_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    import psycopg

    try:
        admin = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError:
        pytest.skip("PostgreSQL does not answer")
    name = f"dreamer_oracle_{secrets.token_hex(4)}"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('pgkernel') / 'kernel.db'}")
    store.migrate()
    data = DataService(store)
    try:
        with psycopg.connect(url) as db:
            for schema, changes in (("a", []), ("b", CHANGES)):
                db.execute(f"CREATE SCHEMA {schema}")
                db.execute(f"SET search_path = {schema}")
                db.execute(SCHEMA)
                db.execute("CREATE INDEX ix_salary ON employees(salary)")
                for table, rows in demo_rows(ANCHOR).items():
                    with db.cursor().copy(f"COPY {table} FROM STDIN") as copy:
                        for row in rows:
                            copy.write_row(row)
                for change in changes:
                    db.execute(change)
                db.execute("ANALYZE")
        for copy in "ab":
            data.add(f"copy-{copy}", f"{url}?schema={copy}", scopes=SCOPES_FILE.read_text())
        yield Pair(data)
    finally:
        if hasattr(engine_pg, "close_pools"):
            engine_pg.close_pools()
        for copy in "ab":
            try:
                data.remove(f"copy-{copy}")
            except DreamerError:
                pass
        store.engine.dispose()
        with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3) as db:
            db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgres"])
def pair(request: pytest.FixtureRequest) -> Pair:
    return request.getfixturevalue(f"{request.param}_pair")


@pytest.mark.parametrize("probe", list(PROBES))
def test_a_scoped_user_cannot_tell_two_databases_apart_by_what_is_outside_the_scope(pair: Pair, probe: str) -> None:
    sql = PROBES[probe]
    assert _observe(pair.data, "a", sql) == _observe(pair.data, "b", sql)


def test_the_copies_do_differ_where_the_administrator_looks(pair: Pair) -> None:
    """The probes are not blind: hr_admin, who sees the hidden row, does tell the copies apart."""
    told_apart = [p for p, sql in PROBES.items()
                  if _observe(pair.data, "a", sql, "hr_admin")[0] != _observe(pair.data, "b", sql, "hr_admin")[0]]
    assert "overflow on an indexed salary" in told_apart and "overflow on an indexed date" in told_apart


def test_runtime_errors_say_one_generic_sentence(pair: Pair) -> None:
    """An error on a row the user may see still carries no value of it: one sentence for all."""
    for sql in (f"SELECT abs(CASE WHEN salary > 0 THEN {MIN} END) FROM employees",
                "SELECT COUNT(*) FROM employees WHERE like('%', name, CASE WHEN salary > 0 THEN 'ab' END)"):
        assert _observe(pair.data, "a", sql) == ("error", "sql_error", RUNTIME_ERROR)
    # A mistake in the SQL itself depends on nothing but the schema: its words still come back.
    code, kind, message = _observe(pair.data, "a", "SELECT nope FROM employees")
    assert kind == "sql_error" and "nope" in message
