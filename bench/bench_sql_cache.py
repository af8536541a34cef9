"""What a data query costs through the kernel's DataService, run and from the result cache, on
SQLite and on PostgreSQL (the demo HR rows), as ops_manager: the guard, the data-version check,
the engine layer. A cache hit still validates the SQL and checks the data version; on
PostgreSQL that check is read through the reader pool at most once a second per connection.

    .venv/bin/python bench/bench_sql_cache.py                      # SQLite, and PostgreSQL if it answers
    .venv/bin/python bench/bench_sql_cache.py --runs 200 --pg-url postgresql://postgres@127.0.0.1:5432/test

Reports medians and p90 per backend: a query that runs (a different SQL text each time), a
cache hit, and data_version() alone (with the once-a-second throttle off, i.e. a real read);
with the reader pool's counters (connections opened against requests served).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

from dreamer.kernel.data import connection as connection_module
from dreamer.kernel.data import engine_pg
from dreamer.kernel.data.demo import SCHEMA, SCOPES_FILE, build_demo, demo_rows
from dreamer.kernel.data.queries import DataService
from dreamer.kernel.store.db import Store

SQL = "SELECT department, COUNT(*) FROM employees GROUP BY department"


def _timed(runs: int, work: Callable[[int], Any]) -> dict[str, float]:
    times = []
    for i in range(runs):
        start = time.perf_counter()
        work(i)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"p50": round(statistics.median(times), 2), "p90": round(times[int(len(times) * 0.9)], 2)}


def _measure(data: DataService, runs: int) -> dict[str, Any]:
    data.query("hr", "ops_manager", SQL, 2)  # warm: the connection loaded, the pool holds a reader
    out = {"runs (different SQL each)": _timed(runs, lambda i: data.query(
        "hr", "ops_manager", f"{SQL} HAVING COUNT(*) > {-1 - i}", 2))}
    hit = data.query("hr", "ops_manager", SQL, 2)
    out["cache hit"] = _timed(runs, lambda i: data.query("hr", "ops_manager", SQL, 2))
    assert data.query("hr", "ops_manager", SQL, 2).cached and hit is not None
    conn = data.connection("hr")
    throttle = connection_module.VERSION_CHECK_S
    connection_module.VERSION_CHECK_S = 0.0
    try:
        out["data_version() read"] = _timed(runs, lambda i: conn.data_version())
    finally:
        connection_module.VERSION_CHECK_S = throttle
    return out


@contextmanager
def _service(folder: Path, url: str) -> Iterator[DataService]:
    store = Store(f"sqlite:///{folder / 'kernel.db'}")
    store.migrate()
    data = DataService(store)
    data.add("hr", url, scopes=SCOPES_FILE.read_text())
    try:
        yield data
    finally:
        data.remove("hr")
        store.dispose()


@contextmanager
def _postgres(admin_url: str) -> Iterator[str]:
    import psycopg

    name = f"dreamer_bench_{secrets.token_hex(4)}"
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=3) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = admin_url.rsplit("/", 1)[0] + f"/{name}"
    try:
        with psycopg.connect(url) as db:
            db.execute("CREATE SCHEMA hr")
            db.execute("SET search_path = hr")
            db.execute(SCHEMA)
            for table, rows in demo_rows(date(2026, 11, 1)).items():
                with db.cursor().copy(f"COPY {table} FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
        yield f"{url}?schema=hr"
    finally:
        engine_pg.close_pools()
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=3) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--pg-url", default=os.environ.get("DREAMER_TEST_PG_URL",
                                                           "postgresql://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = build_demo(Path(tmp) / "hr.db", date(2026, 11, 1))
        with _service(Path(tmp), f"sqlite:///{path}") as data:
            report["sqlite"] = _measure(data, args.runs)
        import psycopg

        try:
            (Path(tmp) / "pg").mkdir()
            with _postgres(args.pg_url) as url, _service(Path(tmp) / "pg", url) as data:
                report["postgres"] = _measure(data, args.runs)
                conn = data.connection("hr")
                stats = engine_pg.pool_stats(engine_pg.reader_url(conn.url, conn.secrets["reader"],
                                                                  conn.secrets["password"]))
                report["postgres"]["reader pool"] = {k: stats.get(k, 0) for k in ("connections_num", "requests_num")}
        except psycopg.OperationalError as exc:  # the server does not answer
            report["postgres"] = f"not measured: {exc}"
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for backend, rows in report.items():
        print(backend)
        for what, value in (rows.items() if isinstance(rows, dict) else [("", rows)]):
            print(f"  {what:28} {value}")


if __name__ == "__main__":
    main()
