"""How long a training export of 10,000 spans takes (issue 20 target: under 10 s).

Seeds a fresh kernel store (SQLite by default, the kernel's own) with 1,000 runs of 10
spans each (2 invocations, 3 model calls with their requests and responses, 1 reward per
run; bench/export_seed.py), then streams the whole export in each format through
kernel/tracing/export, the code GET /v1/traces/export runs, scrubbing secrets included,
and counts the bytes. Prints the median of --rounds runs per format.

    .venv/bin/python bench/bench_export.py [--spans 10000] [--rounds 5] [--database-url URL] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from export_seed import SPANS_PER_RUN, seed

from dreamer.kernel.store.db import Store
from dreamer.kernel.tracing.export import FORMATS, Exportee, export_lines, known_secrets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--database-url", help="an empty database to use instead of a temporary SQLite file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(args.database_url or f"sqlite:///{Path(tmp) / 'kernel.db'}")
        store.migrate()
        started = time.perf_counter()
        seeded = seed(store, "bench", runs=args.spans // SPANS_PER_RUN, secret="drm_" + "x" * 40)
        seed_s = time.perf_counter() - started
        users = [Exportee(seeded.user_id, "bench")]
        results = {}
        for fmt in FORMATS:
            times, size, lines = [], 0, 0
            for _ in range(args.rounds):
                started = time.perf_counter()
                secrets = known_secrets(store)
                size = lines = 0
                for line in export_lines(store, users, fmt, None, secrets):
                    size += len(line)
                    lines += 1
                times.append(time.perf_counter() - started)
            results[fmt] = {"median_s": round(statistics.median(times), 3), "max_s": round(max(times), 3),
                            "lines": lines, "megabytes": round(size / 1e6, 2)}
        store.dispose()
    report = {"spans": seeded.spans, "runs": len(seeded.runs), "seed_s": round(seed_s, 2), "rounds": args.rounds,
              "formats": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{seeded.spans} spans in {len(seeded.runs)} runs (seeded in {seed_s:.1f} s), {args.rounds} rounds each")
    for fmt, r in results.items():
        print(f"  {fmt:15} median {r['median_s']:6.2f} s  max {r['max_s']:6.2f} s  {r['lines']:6} lines  {r['megabytes']:7.2f} MB")


if __name__ == "__main__":
    main()
