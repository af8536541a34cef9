"""Kernels side by side in many short alternating rounds, their CPU read in nanoseconds.

bench_call_threads.py reads CPU from /proc/<pid>/stat in clock ticks (10 ms) and runs a
16-client burst each round; on a shared machine its rounds are long and far apart. Here a
round is N warm calls then N `GET /healthz` per kernel, in alternating order, and the CPU
of every thread of the kernel comes from /proc/<pid>/task/<tid>/schedstat (time on a CPU,
in ns). Each kernel after the first is compared with the first round by round (the median
of the per-round ratios), so both see the same moments of the machine.

    .venv/bin/python bench/bench_cpu_pairs.py base=.venv/bin/python:'{"PYTHONPATH": "/tmp/base"}' \\
        new=.venv/bin/python --rounds 20 --n 200
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests" / "e2e"))
sys.path.insert(0, str(HERE))

from bench_side_by_side import kernels_for, options  # noqa: E402

CALL = "/v1/agents/grocery/functions/list_items"


def cpu_ns(pid: int) -> int:
    """Nanoseconds on a CPU so far, all threads of the process (a thread that ended is missing)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
        except OSError:
            continue
    return total


def main() -> None:
    specs, rounds, n = options()
    loads = [os.getloadavg()[0]]
    keys = ("call_cpu_ms", "healthz_cpu_ms", "call_p50_ms", "healthz_p50_ms")
    seen: dict[str, dict[str, list[float]]] = {}
    with kernels_for(specs) as kernels:
        clients = {name: k.client() for name, k in kernels.items()}
        seen = {name: {key: [] for key in keys} for name in kernels}
        for c in clients.values():
            for _ in range(100):
                assert c.post(CALL, json={"args": {}}).status_code == 200
        for r in range(rounds):
            for name in list(kernels) if r % 2 == 0 else list(reversed(kernels)):
                pid, c = kernels[name].process.pid, clients[name]
                for key_cpu, key_ms, method, path in (
                    ("call_cpu_ms", "call_p50_ms", "POST", CALL),
                    ("healthz_cpu_ms", "healthz_p50_ms", "GET", "/healthz"),
                ):
                    body = {"args": {}} if method == "POST" else None
                    before, took = cpu_ns(pid), []
                    for _ in range(n):
                        started = time.perf_counter()
                        assert c.request(method, path, json=body).status_code == 200
                        took.append(time.perf_counter() - started)
                    seen[name][key_cpu].append((cpu_ns(pid) - before) / n / 1e6)
                    seen[name][key_ms].append(statistics.median(took) * 1e3)
            loads.append(os.getloadavg()[0])
    med = statistics.median
    first = next(iter(seen))
    out: dict[str, object] = {}
    for name, got in seen.items():
        row: dict[str, object] = {key: round(med(values), 3) for key, values in got.items()}
        # The "kernel CPU per warm call": the call's CPU less the HTTP floor's.
        minus = [a - b for a, b in zip(got["call_cpu_ms"], got["healthz_cpu_ms"])]
        row["call_minus_healthz_cpu_ms"] = round(med(minus), 3)
        if name != first:
            base = seen[first]
            for key in ("call_cpu_ms", "healthz_cpu_ms"):
                row[f"{key}_ratio_to_{first}"] = round(med([a / b for a, b in zip(got[key], base[key])]), 3)
            base_minus = [a - b for a, b in zip(base["call_cpu_ms"], base["healthz_cpu_ms"])]
            row[f"call_minus_healthz_cpu_ms_change_from_{first}"] = round(med([a - b for a, b in zip(minus, base_minus)]), 3)
        out[name] = row
    out["load_average_per_round"] = [round(x, 2) for x in loads]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
