"""What a query result may hold, and what the result cache costs, on SQLite and PostgreSQL:
the row cap (10,000) and the byte cap (8 MB) cut a result and say which cut it; on PostgreSQL
every query and every data-version check goes through the reader's pool (no new login per
query), the check is read at most once a second, and it changes when the data does."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hr_testkit import PG_ADMIN_URL, Demo

from dreamer.kernel.data import connection as connection_module
from dreamer.kernel.data import engine_pg
from dreamer.kernel.data.caps import MAX_RESULT_BYTES, MAX_ROWS
from dreamer.kernel.data.demo import SCOPES_FILE
from dreamer.kernel.data.queries import DataService
from dreamer.kernel.store.db import Store

# 10,000 characters a row (three REPLACEs each make every character ten): 8 MB in about 800 rows.
WIDE = "REPLACE(REPLACE(REPLACE('aaaaaaaaaa', 'a', 'bbbbbbbbbb'), 'b', 'cccccccccc'), 'c', 'dddddddddd')"


@pytest.fixture
def service(demo: Demo, tmp_path: Path) -> Any:
    """The demo connection behind a DataService (PostgreSQL: a reader role of its own, dropped after)."""
    store = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    store.migrate()
    data = DataService(store)
    url = demo.conn.url.render_as_string(hide_password=False)
    data.add("caps", url + (f"?schema={demo.schema}" if demo.schema != "main" else ""), scopes=SCOPES_FILE.read_text())
    try:
        yield data
    finally:
        data.remove("caps")
        store.dispose()


def test_the_row_cap_cuts_a_result_and_says_so(service: DataService) -> None:
    ran = service.query("caps", "hr_admin", "SELECT a.employee_id, e.employee_id FROM attendance a CROSS JOIN employees e",
                        1)
    page = ran.result.page(1, 50)
    assert page["total_rows"] == MAX_ROWS and page["truncated"] is True and page["truncated_by"] == "rows"


def test_the_byte_cap_cuts_a_result_before_the_row_cap_and_says_so(service: DataService) -> None:
    ran = service.query("caps", "hr_admin", f"SELECT {WIDE} AS wide FROM attendance", 1)
    page = ran.result.page(1, 10)
    assert page["truncated"] is True and page["truncated_by"] == "bytes"
    assert 0 < page["total_rows"] < MAX_ROWS
    assert sum(len(row[0]) + 1 for row in ran.result.rows) <= MAX_RESULT_BYTES


def test_a_whole_result_is_not_flagged(service: DataService) -> None:
    page = service.query("caps", "hr_admin", "SELECT employee_id FROM employees", 1).result.page(1, 10)
    assert page["truncated"] is False and page["truncated_by"] is None and page["total_rows"] > 10


def _reader(demo: Demo) -> Any:
    return engine_pg.reader_url(demo.conn.url, demo.conn.secrets["reader"], demo.conn.secrets["password"])


def test_postgres_queries_and_data_version_checks_share_the_reader_pool(
        postgres_demo: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    conn, url = postgres_demo.conn, _reader(postgres_demo)
    role = conn.role_for("hr_admin")
    assert role is not None
    opened: list[Any] = []
    real = psycopg.connect

    def counted(*args: Any, **kwargs: Any) -> Any:  # a connection made outside the pool
        opened.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(psycopg, "connect", counted)
    monkeypatch.setattr(connection_module, "VERSION_CHECK_S", 0.0)  # every call checks
    conn.execute(role, "SELECT 1", 10)  # the pool holds a connection from here on
    before = engine_pg.pool_stats(url)
    for i in range(5):
        conn.data_version()
        conn.execute(role, f"SELECT COUNT(*) + {i} FROM employees", 10)
    after = engine_pg.pool_stats(url)
    assert opened == []
    assert after.get("requests_num", 0) - before.get("requests_num", 0) == 10
    assert after.get("connections_num", 0) == before.get("connections_num", 0)  # no new login


def test_postgres_data_version_is_read_at_most_once_a_second_per_connection(
        postgres_demo: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    conn, url = postgres_demo.conn, _reader(postgres_demo)
    clock = {"now": 1000.0}
    monkeypatch.setattr(connection_module.time, "monotonic", lambda: clock["now"])
    conn._version = None
    first = conn.data_version()
    asked = engine_pg.pool_stats(url).get("requests_num", 0)
    clock["now"] += 0.5
    assert conn.data_version() == first
    assert engine_pg.pool_stats(url).get("requests_num", 0) == asked  # served from the last check
    clock["now"] += 0.6
    conn.data_version()
    assert engine_pg.pool_stats(url).get("requests_num", 0) == asked + 1


def test_postgres_data_version_changes_when_the_data_does(postgres_demo: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = postgres_demo.conn
    monkeypatch.setattr(connection_module, "VERSION_CHECK_S", 0.0)
    before = conn.data_version()
    database = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + str(conn.url.database)
    with psycopg.connect(database, autocommit=True) as admin:  # a write and its undoing: the rows are as before
        admin.execute("INSERT INTO hr.approved_leave VALUES (1001, '2020-01-01', '2020-01-02', 'annual')")
        admin.execute("DELETE FROM hr.approved_leave WHERE start_date = '2020-01-01'")
    for _ in range(100):  # the statistics arrive shortly after the writer's session ends
        if conn.data_version() != before:
            break
        time.sleep(0.1)
    assert conn.data_version() != before
