"""The kernel's own work for a call, in-process: `Invoker.invoke` with a worker that answers
at once (tests/store/test_admission_durable.py's), on a file SQLite store. No HTTP, no
process hop, no other tenant's noise in the figure: the admission, the records and their
commits, measured in CPU time over blocks of calls; and the commits the event loop made,
their median, p99 and mean wall time (a WAL checkpoint on the loop shows in the p99).

With `--tracing` the invoker's tracer is the kernel's own (`setup_tracing`: its spans batched
and written to the store through the invoker's writer), so a call's span is in the figure; without
it the tracer is OpenTelemetry's no-op one. `--span-cost` measures what the kernel's tracer adds
to a call: blocks with the no-op tracer and with the kernel's alternate in one process (each
kernel-traced block flushes its spans to the store before the process's clock stops), and the median of
the pairs' differences is given for the event loop's thread (making and ending the span) and
for the whole process (with the export thread's rows and commits).

    .venv/bin/python bench/bench_invoke.py
    .venv/bin/python bench/bench_invoke.py --tracing
    .venv/bin/python bench/bench_invoke.py --span-cost --pairs 20
    .venv/bin/python bench/bench_invoke.py --concurrency 4 --worker-ms 0.2   # ends on the writer thread

With `--concurrency N` that many calls are in flight at once, each worker answering after
`--worker-ms`; the event loop's share of the CPU is given apart (the rest is the writer thread's).
    PYTHONPATH=/tmp/variants/base .venv/bin/python bench/bench_invoke.py   # another copy of the code
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import sqlalchemy.engine.default as sqlalchemy_default

import dreamer

ROOT = Path(next(iter(dreamer.__path__)))  # the checkout being measured
sys.path.insert(0, str(ROOT / "tests" / "store"))

import test_admission_durable as world  # noqa: E402

from dreamer.kernel.invocations.principal import Caller  # noqa: E402
from dreamer.kernel.store.db import Store  # noqa: E402
from dreamer.kernel.tracing import setup_tracing  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tracing", action="store_true", help="the kernel's tracer provider, not a no-op tracer")
    parser.add_argument("--span-cost", action="store_true", help="no-op and kernel tracer in alternating blocks")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=1,
                        help="calls in flight at once, each worker answering after --worker-ms")
    parser.add_argument("--worker-ms", type=float, default=0.0)
    options = parser.parse_args()
    tracing = options.tracing or options.span_cost
    blocks, n = 5, 1000
    home = Path(tempfile.mkdtemp())
    store = Store(f"sqlite:///{home / 'kernel.db'}")
    store.migrate()
    invoker, _, ada = world._world(store, home)
    provider = setup_tracing(store, writer=invoker.writer) if tracing else None
    if provider is not None and not options.span_cost:
        invoker.tracer = provider.get_tracer("dreamer.kernel")
    if options.worker_ms:
        answer = invoker.pool.worker.request  # type: ignore[attr-defined]

        async def slow(method: str, params: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            await asyncio.sleep(options.worker_ms / 1000)
            return await answer(method, params, **kwargs)

        invoker.pool.worker.request = slow  # type: ignore[attr-defined]
    commits: list[float] = []
    plain_commit = sqlalchemy_default.DefaultDialect.do_commit

    def timed(self: Any, conn: Any) -> None:
        started = time.perf_counter()
        plain_commit(self, conn)
        commits.append(time.perf_counter() - started)

    async def span_cost() -> dict[str, Any]:
        assert provider is not None
        tracers = {"noop": invoker.tracer, "kernel": provider.get_tracer("dreamer.kernel")}
        for tracer in tracers.values():
            invoker.tracer = tracer
            for _ in range(300):
                await invoker.invoke(ada, "notes", "read", {}, Caller("user"))
        provider.force_flush()
        seen: dict[str, dict[str, list[float]]] = {name: {"loop": [], "process": []} for name in tracers}
        for pair in range(options.pairs):
            for name in tracers if pair % 2 == 0 else reversed(list(tracers)):
                invoker.tracer = tracers[name]
                loop, process = time.thread_time(), time.process_time()
                for _ in range(500):
                    await invoker.invoke(ada, "notes", "read", {}, Caller("user"))
                seen[name]["loop"].append((time.thread_time() - loop) / 500 * 1e6)
                if name == "kernel":
                    provider.force_flush()  # exports in this thread: after the loop's clock stopped
                seen[name]["process"].append((time.process_time() - process) / 500 * 1e6)
        result: dict[str, Any] = {"code": str(ROOT), "pairs": options.pairs, "calls_per_block": 500}
        for clock in ("loop", "process"):
            noop, kernel = seen["noop"][clock], seen["kernel"][clock]
            result[clock] = {"noop_us": round(statistics.median(noop), 1), "kernel_us": round(statistics.median(kernel), 1),
                             "added_us": round(statistics.median(k - o for k, o in zip(kernel, noop)), 1)}
        return result

    async def calls(count: int) -> None:
        left = [count]

        async def client() -> None:
            while left[0] > 0:
                left[0] -= 1
                await invoker.invoke(ada, "notes", "read", {}, Caller("user"))

        await asyncio.gather(*(client() for _ in range(options.concurrency)))

    async def run() -> dict[str, Any]:
        if options.span_cost:
            return await span_cost()
        await calls(300)
        cpu, loop_cpu, walls = [], [], []
        batches = invoker.writer.batches
        sqlalchemy_default.DefaultDialect.do_commit = timed  # type: ignore[method-assign]
        for _ in range(blocks):
            started, loop, wall = time.process_time(), time.thread_time(), time.perf_counter()
            await calls(n)
            cpu.append((time.process_time() - started) / n * 1e6)
            loop_cpu.append((time.thread_time() - loop) / n * 1e6)
            walls.append((time.perf_counter() - wall) / n * 1e6)
        ordered = sorted(commits)
        return {
            "code": str(ROOT),
            "tracing": tracing,
            "concurrency": options.concurrency, "worker_ms": options.worker_ms,
            "cpu_us_per_invoke_median_of_blocks": round(statistics.median(cpu)),
            "of_which_event_loop_us": round(statistics.median(loop_cpu)),
            "wall_us_per_invoke": round(statistics.median(walls)),
            "commits_per_call": round((invoker.writer.batches - batches) / (blocks * n), 2),
            "commit_wall_us": {"median": round(ordered[len(ordered) // 2] * 1e6),
                               "p99": round(ordered[int(len(ordered) * 0.99)] * 1e6),
                               "mean": round(sum(ordered) / len(ordered) * 1e6)},
        }

    try:
        print(json.dumps(asyncio.run(run())))
    finally:
        sqlalchemy_default.DefaultDialect.do_commit = plain_commit  # type: ignore[method-assign]
        if provider is not None:
            provider.shutdown()
        invoker.writer.close()
        store.dispose()


if __name__ == "__main__":
    main()
