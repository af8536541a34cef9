"""The demo HR data on SQLite and on PostgreSQL, with a "truth" copy holding only what
ops_manager may see: a secured query must return exactly what the same SQL returns on
the truth copy, so any leaked row or aggregate over hidden rows shows as a difference."""

from __future__ import annotations

import os
import secrets
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

import pytest

from dreamer.kernel.data import engine_pg
from dreamer.kernel.data.connection import Connection, build
from dreamer.kernel.data.demo import SCHEMA, SCOPES_FILE, build_demo, demo_rows

PG_ADMIN_URL = os.environ.get("DREAMER_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
ANCHOR = date(2026, 11, 1)
_OUTSIDE = "employee_id NOT IN (SELECT employee_id FROM employees WHERE department = 'D042')"
HIDE = {  # what ops_manager must not see, deleted from the truth copy (records before their employees)
    "attendance": _OUTSIDE,
    "approved_leave": _OUTSIDE,
    "absence_records": _OUTSIDE,
    "employees": "department <> 'D042'",
}


@dataclass
class Demo:
    conn: Connection  # the real data, secured for the role by the layers under test
    truth: str  # where the same SQL answers with only the role's rows (SQLite path or PG schema)
    schema: str


@pytest.fixture(scope="session")
def sqlite_demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    folder = tmp_path_factory.mktemp("hr")
    path = build_demo(folder / "hr.db", ANCHOR)
    truth = folder / "truth.db"
    shutil.copy(path, truth)
    with sqlite3.connect(truth) as db:
        for table, hidden in HIDE.items():
            db.execute(f"DELETE FROM {table} WHERE {hidden}")
    return Demo(build("hr", f"sqlite:///{path}", "main", "", SCOPES_FILE.read_text(), {}), str(truth), "main")


@pytest.fixture(scope="session")
def postgres_demo() -> Iterator[Demo]:
    import psycopg

    try:
        admin = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError:
        pytest.skip("PostgreSQL does not answer")
    name = f"dreamer_sqlx_{secrets.token_hex(4)}"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    reader, password = engine_pg.new_reader("hr")
    try:
        with psycopg.connect(url) as db:
            for schema in ("hr", "hr_truth"):
                db.execute(f"CREATE SCHEMA {schema}")
                db.execute(f"SET search_path = {schema}")
                db.execute(SCHEMA)
                for table, rows in demo_rows(ANCHOR).items():
                    with db.cursor().copy(f"COPY {table} FROM STDIN") as copy:
                        for row in rows:
                            copy.write_row(row)
            db.execute("SET search_path = hr_truth")
            for table, hidden in HIDE.items():
                db.execute(f"DELETE FROM {table} WHERE {hidden}")
        conn = build("hr", url + "?schema=hr", "hr", "", SCOPES_FILE.read_text(), {})
        roles = [conn.scopes.role(n, set(conn.columns)) for n in conn.scopes.roles]
        engine_pg.provision(conn.url, "hr", roles, reader, password)
        conn.secrets = {"reader": reader, "password": password}
        yield Demo(conn, "hr_truth", "hr")
    finally:
        try:
            from sqlalchemy.engine import make_url

            engine_pg.drop_reader(make_url(url.replace("postgresql://", "postgresql+psycopg://")), reader)
        finally:
            with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3) as db:
                db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgres"])
def demo(request: pytest.FixtureRequest) -> Demo:
    return request.getfixturevalue(f"{request.param}_demo")
