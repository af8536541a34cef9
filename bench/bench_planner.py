"""Sidekick's offline planner with the semantic matcher: time per request, and the model's load time.

    .venv/bin/python bench/bench_planner.py

Runs every single request of tests/sidekick (routing_cases.yaml and the routing
families) through OfflinePlanner over the starters' real specs, three times, and
prints the median and 95th percentile per request in wall-clock and CPU time; then
loads the embedding model in a fresh process, five times, and prints the median.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "sidekick"))

from dreamer.sidekick.planner import OfflinePlanner
from routing_eval import (
    FAMILIES,
    held_out_families,
    load_cases,
    load_families,
    load_tools,
)

LOAD = ("import time; t, c = time.perf_counter(), time.process_time(); "
        "from dreamer.sidekick.planner.language import embeddings; embeddings.model(); "
        "print(time.perf_counter() - t, time.process_time() - c)")


def main() -> None:
    tools = load_tools()
    cases, context = load_cases()
    texts = [c.text for c in cases] + [c.text for c in load_families(FAMILIES, "dev")[0]]
    texts += [c.text for c in held_out_families()[0]]
    planner = OfflinePlanner()
    planner.plan("warm up", tools, context)
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(3):
        for text in texts:
            start, start_cpu = time.perf_counter(), time.process_time()
            planner.plan(text, tools, context)
            wall.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
    q = statistics.quantiles
    print(f"{len(texts)} requests x 3 over {len(tools)} functions: wall median {statistics.median(wall):.1f} ms, "
          f"p95 {q(wall, n=20)[-1]:.1f} ms; CPU median {statistics.median(cpu):.1f} ms, p95 {q(cpu, n=20)[-1]:.1f} ms")
    loads = [[float(x) for x in subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True,
                                               check=True).stdout.split()] for _ in range(5)]
    print(f"embedding model load (import and read, fresh process): wall median "
          f"{statistics.median(w for w, _ in loads):.2f} s, CPU median {statistics.median(c for _, c in loads):.2f} s")


if __name__ == "__main__":
    main()
