"""A call's span as the SDK's usual way makes it and as the kernel makes it, in-process.

The invoker made its `invoke_agent` span with `start_as_current_span` under the SDK's default
sampler, ParentBased(ALWAYS_ON); it now holds it with `ending` (kernel/tracing/spans.py),
current only around syscalls, under `EverySpan` (kernel/tracing/provider.py). Each way, and
each change alone, makes N spans like a warm call's (six attributes, a fresh invocation id,
the trace id read for the row) through a BatchSpanProcessor into the store's exporter; the CPU
of the thread that makes and ends them is measured per block, the ways in alternating order,
and the exports run between the blocks (`force_flush`), outside the clock.

    .venv/bin/python bench/bench_call_span.py --blocks 16
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Tracer

from dreamer.kernel.invocations.records import new_invocation_id
from dreamer.kernel.store.db import Store
from dreamer.kernel.tracing.ids import TimeOrderedIds
from dreamer.kernel.tracing.provider import EverySpan
from dreamer.kernel.tracing.spans import ending
from dreamer.kernel.tracing.store_exporter import StoreSpanExporter

N = 2000


def _attributes() -> dict[str, str]:
    return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "grocery", "dreamer.function": "list_items",
            "dreamer.invocation_id": new_invocation_id(), "dreamer.user": "ada", "dreamer.caller": "user"}


def _as_current(tracer: Tracer) -> Callable[[], None]:
    def one() -> None:
        with tracer.start_as_current_span("invoke_agent grocery", attributes=_attributes()):
            context = trace.get_current_span().get_span_context()
            format(context.trace_id, "032x") if context.is_valid else None

    return one


def _held(tracer: Tracer) -> Callable[[], None]:
    def one() -> None:
        with ending(tracer.start_span("invoke_agent grocery", attributes=_attributes())) as span:
            context = span.get_span_context()
            format(context.trace_id, "032x") if context.is_valid else None

    return one


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=16)
    blocks = parser.parse_args().blocks
    home = Path(tempfile.mkdtemp())
    store = Store(f"sqlite:///{home / 'kernel.db'}")
    store.migrate()
    providers = []
    for sampler in (None, EverySpan()):  # None: the SDK's default (OTEL_TRACES_SAMPLER unset)
        provider = TracerProvider(id_generator=TimeOrderedIds(), sampler=sampler)
        provider.add_span_processor(BatchSpanProcessor(StoreSpanExporter(store), schedule_delay_millis=250,
                                                       max_queue_size=2 * N))
        providers.append(provider)
    default, every = (p.get_tracer("dreamer.kernel") for p in providers)
    ways = {"as_current_default_sampler": _as_current(default), "ending_default_sampler": _held(default),
            "as_current_every_span": _as_current(every), "ending_every_span": _held(every)}

    def flush() -> None:
        for p in providers:
            p.force_flush()

    for one in ways.values():
        for _ in range(300):
            one()
    flush()
    seen: dict[str, list[float]] = {name: [] for name in ways}
    for block in range(blocks):
        for name in list(ways) if block % 2 == 0 else list(reversed(ways)):
            gc.collect()
            started = time.thread_time()
            for _ in range(N):
                ways[name]()
            seen[name].append((time.thread_time() - started) / N * 1e6)
            flush()
    first = seen["as_current_default_sampler"]
    print(json.dumps({name: {"us_per_span": round(statistics.median(v), 2),
                             "ratio": round(statistics.median(a / b for a, b in zip(v, first)), 3)}
                      for name, v in seen.items()}))
    for p in providers:
        p.shutdown()
    store.dispose()


if __name__ == "__main__":
    main()
