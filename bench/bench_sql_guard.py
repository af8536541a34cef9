"""What the SQL guard costs per query: validation (sqlglot parse + tree walk) plus the
scope rewrite (scope analysis + replacing each base table), in-process, for queries of
typical size as the ops_manager role of the demo HR data. No database is touched.

Reports p50 / p90 / p99 per query shape and over all of them (target: p50 under 2 ms).
With --engine, also the whole query through the SQLite engine layer (open the secured
connection, fill the scope's rows into temp tables, compile, run), as ops_manager.

    .venv/bin/python bench/bench_sql_guard.py            # a few seconds
    .venv/bin/python bench/bench_sql_guard.py --engine --runs 200
    .venv/bin/python bench/bench_sql_guard.py --json --runs 2000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from dreamer.kernel.data.connection import build
from dreamer.kernel.data.demo import SCOPES_FILE, build_demo
from dreamer.kernel.data.rewriter import guard

QUERIES = {
    "count": "SELECT COUNT(*) FROM employees WHERE status = 'active'",
    "group by": "SELECT department, COUNT(*), AVG(salary) FROM employees GROUP BY department ORDER BY 2 DESC",
    "join + date range": (
        "SELECT COUNT(DISTINCT a.employee_id) FROM absence_records a JOIN employees e ON a.employee_id = e.employee_id "
        "WHERE e.department = 'D042' AND a.absence_date >= '2026-10-01' AND a.absence_date < '2026-11-01'"),
    "cte + subquery": (
        "WITH absent AS (SELECT employee_id, COUNT(*) AS days FROM absence_records GROUP BY employee_id) "
        "SELECT e.name, absent.days FROM employees e JOIN absent ON absent.employee_id = e.employee_id "
        "WHERE e.employee_id IN (SELECT employee_id FROM approved_leave) ORDER BY absent.days DESC LIMIT 10"),
    "union + window": (
        "SELECT employee_id, RANK() OVER (ORDER BY salary DESC) FROM employees "
        "UNION ALL SELECT employee_id, 0 FROM attendance WHERE status = 'absent'"),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--engine", action="store_true", help="also time the query through the SQLite engine layer")
    parser.add_argument("--cpu", action="store_true",
                        help="measure this process's CPU time instead of wall time (steadier on a loaded machine)")
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    with tempfile.TemporaryDirectory() as tmp:
        path = build_demo(Path(tmp) / "hr.db", date(2026, 11, 1))
        conn = build("hr", f"sqlite:///{path}", "main", "", SCOPES_FILE.read_text(), {})
        role, target = conn.role_for("ops_manager"), conn.target
        report: dict[str, dict[str, float]] = {}
        everything: list[float] = []
        for name, sql in QUERIES.items():
            for _ in range(20):  # warm sqlglot's caches
                guard(sql, role, target, conn.source)
            times = []
            for _ in range(args.runs):
                started = clock()
                guard(sql, role, target, conn.source)
                times.append((clock() - started) * 1000)
            everything += times
            report[name] = _summary(times)
        report["all"] = _summary(everything)
        if args.engine:
            # ops_manager's tables are filtered, so their rows are filled into temp tables first;
            # hr_admin sees everything through plain views: the difference is what the fence costs.
            for who in ("ops_manager", "hr_admin"):
                reader = conn.role_for(who)
                engine_all: list[float] = []
                for name, sql in QUERIES.items():
                    guarded = guard(sql, reader, target, conn.source)
                    for _ in range(5):
                        conn.execute(reader, guarded.secured, 10_000, guarded.tables)
                    times = []
                    for _ in range(args.runs):
                        started = clock()
                        conn.execute(reader, guarded.secured, 10_000, guarded.tables)
                        times.append((clock() - started) * 1000)
                    engine_all += times
                    report[f"engine {who}: {name}"] = _summary(times)
                report[f"engine {who}: all"] = _summary(engine_all)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{'query':<36} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8}")
    for name, row in report.items():
        print(f"{name:<36} {row['p50']:>8.3f} {row['p90']:>8.3f} {row['p99']:>8.3f}")
    print(f"python {sys.version.split()[0]}, {args.runs} runs per query")


def _summary(times: list[float]) -> dict[str, float]:
    q = statistics.quantiles(times, n=100)
    return {"p50": round(statistics.median(times), 3), "p90": round(q[89], 3), "p99": round(q[98], 3)}


if __name__ == "__main__":
    main()
