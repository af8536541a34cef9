"""What a warm call's span costs the kernel, in-process, phase by phase.

A call makes one `invoke_agent` span (6 attributes); the BatchSpanProcessor hands the ended
spans to the store's exporter every 250 ms, which makes their rows (`span_values`), inserts
them through the writer (idle here, so the commit is made in the exporting thread, as at
load 1) and leaves the WAL to the writer thread's checkpoint. This measures each phase in
CPU time, on a file SQLite store that already holds `--seed` spans (a long-lived kernel's
table: what makes random keys cost index pages):

- sdk: making and ending the span (the tracer, a processor that only keeps it);
- rows: `span_values` of each span of a batch;
- export: the whole export of a batch (rows, INSERT, commit), per span; commit: the commit
  alone (CPU and wall of the thread that makes it);
- pages: WAL frames the batch's commit wrote, then the PASSIVE checkpoint that copies them
  back (CPU and wall, the latter with the fsync); on PostgreSQL (`--url`), the WAL's bytes.

rows and export are the process's CPU per span (on PostgreSQL the writer thread commits, and
the server's own work is in neither); export_wall is the export's wall time per span.

    .venv/bin/python bench/bench_span_export.py --seed 200000 --batches 40
    PYTHONPATH=/tmp/base .venv/bin/python bench/bench_span_export.py ...   # another copy of the code
    .venv/bin/python bench/bench_span_export.py --url postgresql://postgres@127.0.0.1:5432/EMPTY_DB
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import sqlalchemy.engine.default as sqlalchemy_default
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

import dreamer
from dreamer.kernel.invocations.records import new_invocation_id
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.writer import GroupWriter
from dreamer.kernel.tracing import StoreSpanExporter, setup_tracing
from dreamer.kernel.tracing import store_exporter

ROOT = Path(next(iter(dreamer.__path__)))  # the checkout being measured
BATCH = 250


class _Keep(SpanProcessor):
    def __init__(self) -> None:
        self.ended: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span)


def _spans(n: int, store: Store) -> tuple[list[ReadableSpan], float]:
    """n spans like a warm call's, with the ids the measured code makes (its tracer provider's
    id generator, its invocation ids), and the CPU µs per span of making and ending them."""
    ids = setup_tracing(store, batch=False).id_generator
    provider = TracerProvider(id_generator=ids)
    keep = _Keep()
    provider.add_span_processor(keep)
    tracer = provider.get_tracer("dreamer.kernel")
    gc.collect()  # not a collection of the last batches' garbage inside the timing
    started = time.thread_time()
    for _ in range(n):
        with tracer.start_as_current_span("invoke_agent grocery", attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "grocery",
            "dreamer.function": "list_items",
            "dreamer.invocation_id": new_invocation_id(),
            "dreamer.user": "ada",
            "dreamer.caller": "user",
        }):
            pass
    took = (time.thread_time() - started) / n * 1e6
    return keep.ended, took


def _batches(spans: Sequence[ReadableSpan]) -> list[Sequence[ReadableSpan]]:
    return [spans[i : i + BATCH] for i in range(0, len(spans), BATCH)]


def _wal_frames(store: Store, mode: str) -> tuple[int, float, float]:
    """SQLite's checkpoint: (frames in the WAL, CPU s, wall s)."""
    cpu, wall = time.thread_time(), time.perf_counter()
    with store.engine.connect() as conn:
        _, frames, _ = conn.exec_driver_sql(f"PRAGMA wal_checkpoint({mode})").one()
        conn.commit()
    return int(frames), time.thread_time() - cpu, time.perf_counter() - wall


def _wal_lsn(store: Store) -> int:
    """PostgreSQL: where its WAL is now, in bytes."""
    with store.engine.connect() as conn:
        return int(conn.exec_driver_sql("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").scalar_one())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=200_000, help="spans in the table before measuring")
    parser.add_argument("--batches", type=int, default=40, help="batches of 250 spans measured")
    parser.add_argument("--dir", default=None, help="where the database goes (a fresh temporary folder if not given)")
    parser.add_argument("--url", default=None, help="a PostgreSQL database instead (empty, of this run's own)")
    args = parser.parse_args()

    home = Path(args.dir or tempfile.mkdtemp())
    store = Store(args.url or f"sqlite:///{home / 'kernel.db'}")
    store.migrate()
    writer = GroupWriter(store)
    exporter = StoreSpanExporter(store, writer)
    seeded = time.perf_counter()
    for start in range(0, args.seed, 10_000):
        made, _ = _spans(min(10_000, args.seed - start), store)
        for batch in _batches(made):
            exporter.export(batch)
        if store.is_sqlite:
            _wal_frames(store, "TRUNCATE")
    seed_s = time.perf_counter() - seeded
    if not args.batches:  # only seeding (bench_side_by_side.py --seed-spans)
        writer.close()
        store.dispose()
        print(json.dumps({"code": str(ROOT), "seed": args.seed, "seed_s": round(seed_s, 1)}))
        return

    spans, sdk_us = _spans(args.batches * BATCH, store)
    commit: dict[str, float] = {}
    plain_commit = sqlalchemy_default.DefaultDialect.do_commit

    def timed(self: Any, conn: Any) -> None:  # in the thread that commits
        cpu, wall = time.thread_time(), time.perf_counter()
        plain_commit(self, conn)
        commit["cpu"], commit["wall"] = time.thread_time() - cpu, time.perf_counter() - wall

    per: dict[str, list[float]] = defaultdict(list)
    sqlalchemy_default.DefaultDialect.do_commit = timed  # type: ignore[method-assign]
    try:
        for batch in _batches(spans):
            if store.is_sqlite:
                _wal_frames(store, "TRUNCATE")
            lsn = _wal_lsn(store) if store.is_postgresql else 0
            started = time.process_time()
            for span in batch:
                store_exporter.span_values(span)
            per["rows_us"].append((time.process_time() - started) / len(batch) * 1e6)
            # The process's CPU: on PostgreSQL the writer thread commits; the server's own work is not in it.
            started, wall = time.process_time(), time.perf_counter()
            assert exporter.export(batch).name == "SUCCESS"
            per["export_us"].append((time.process_time() - started) / len(batch) * 1e6)
            per["export_wall_us"].append((time.perf_counter() - wall) / len(batch) * 1e6)
            per["commit_cpu_us"].append(commit["cpu"] / len(batch) * 1e6)
            per["commit_wall_us"].append(commit["wall"] / len(batch) * 1e6)
            if store.is_sqlite:
                frames, cpu, took = _wal_frames(store, "PASSIVE")
                per["wal_pages"].append(frames)
                per["checkpoint_cpu_us"].append(cpu / len(batch) * 1e6)
                per["checkpoint_wall_ms"].append(took * 1e3)
            else:
                per["wal_kb"].append((_wal_lsn(store) - lsn) / 1024)
    finally:
        sqlalchemy_default.DefaultDialect.do_commit = plain_commit  # type: ignore[method-assign]
        writer.close()
    size = os.path.getsize(home / "kernel.db") if store.is_sqlite else 0
    store.dispose()
    print(json.dumps({
        "code": str(ROOT), "backend": store.engine.dialect.name, "seed": args.seed, "seed_s": round(seed_s, 1),
        "db_mb": round(size / 2**20, 1), "load": os.getloadavg()[0], "batch": BATCH, "batches": args.batches,
        "sdk_us_per_span": round(sdk_us, 1),
        **{f"{k}_median": round(statistics.median(v), 1) for k, v in per.items()},
    }))


if __name__ == "__main__":
    main()
