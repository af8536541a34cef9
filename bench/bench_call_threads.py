"""Where a warm call's kernel CPU goes, thread by thread, next to the /healthz floor.

Issue 23's target: a warm call within 1.5x of `GET /healthz` at p50, and at most 0.5 ms
of kernel CPU per call. This starts one kernel per checkout (NAME=PYTHON, as in
bench_side_by_side.py; `:{"ENV": "1"}` after it adds environment variables, e.g.
PYTHONPATH to run another copy of the code with the same interpreter) and measures them
in alternating rounds, so every kernel sees the same moments of a shared machine.

Per round and kernel: N warm calls one after another, each followed by one GET /healthz
(so both see the same load), with the kernel's CPU per call in total and per thread
(/proc/<pid>/task/<tid>/stat, grouped by thread name: the event loop is the main thread,
the store writer is "dreamer-store-w"); then 10*N calls from 16 lean clients
(bench/loadgen.py) for throughput. Prints medians over the rounds as JSON, with the load
average before and after each round.

    .venv/bin/python bench/bench_call_threads.py new=.venv/bin/python
    .venv/bin/python bench/bench_call_threads.py \\
        base=.venv/bin/python:'{"PYTHONPATH": "/tmp/base"}' new=.venv/bin/python --rounds 6 --n 200
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests" / "e2e"))
sys.path.insert(0, str(HERE))

from loadgen import run as loadrun  # noqa: E402
# The whole process's CPU, percentiles and milliseconds, as the side-by-side bench reads them.
from bench_side_by_side import cpu as process_cpu, ms, kernels_for, options, pct  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
CALL = "/v1/agents/grocery/functions/list_items"


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds (user + system) so far of each thread name of one process. A thread that
    ended is missing; the writer and the event loop live as long as the kernel."""
    by_name: dict[str, float] = defaultdict(float)
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            raw = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        name = raw[raw.index("(") + 1 : raw.rindex(")")]
        fields = raw.rsplit(")", 1)[1].split()
        name = "event loop" if tid == str(pid) else name
        by_name[name] += (int(fields[11]) + int(fields[12])) / TICK
    return by_name


def main() -> None:
    specs, rounds, n = options()
    loads = [os.getloadavg()[0]]
    warm: dict[str, list[float]] = defaultdict(list)
    health: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    threads: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    tput: dict[str, list[float]] = defaultdict(list)
    tp_cpu: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    with kernels_for(specs) as kernels:
        clients = {name: k.client() for name, k in kernels.items()}
        for c in clients.values():
            for _ in range(30):
                assert c.post(CALL, json={"args": {}}).status_code == 200
        for r in range(rounds):
            for name in list(kernels) if r % 2 == 0 else list(reversed(kernels)):
                k, c = kernels[name], clients[name]
                pid = k.process.pid
                calls: list[float] = []
                floor: list[float] = []
                before, before_threads = process_cpu(pid), thread_cpu(pid)
                for _ in range(n):
                    started = time.perf_counter()
                    response = c.post(CALL, json={"args": {}})
                    calls.append(time.perf_counter() - started)
                    assert response.status_code == 200, response.text
                    started = time.perf_counter()
                    c.get("/healthz")
                    floor.append(time.perf_counter() - started)
                # /healthz's own CPU is measured apart and taken off, so this is the call's.
                both, after_threads = process_cpu(pid) - before, thread_cpu(pid)
                before = process_cpu(pid)
                for _ in range(n):
                    c.get("/healthz")
                alone = process_cpu(pid) - before
                cpu[name].append((both - alone) / n * 1000)
                for thread, seconds in after_threads.items():
                    threads[name][thread].append((seconds - before_threads.get(thread, 0.0)) / n * 1000)
                warm[name] += calls
                health[name] += floor
                before = process_cpu(pid)
                res = asyncio.run(loadrun(k.url, CALL, k.token, b'{"args": {}}', clients=16, total=n * 10))
                tp_cpu[name].append((process_cpu(pid) - before) / (n * 10) * 1000)
                tput[name].append(n * 10 / res.elapsed_s)
                errors[name] += res.errors
            loads.append(os.getloadavg()[0])
    med = statistics.median
    out: dict[str, object] = {}
    for name in kernels:
        out[name] = {
            "warm_p50": ms(med(warm[name])), "warm_p99": ms(pct(warm[name], 99)),
            "healthz_p50": ms(med(health[name])), "healthz_p99": ms(pct(health[name], 99)),
            "ratio_warm_to_healthz_p50": round(med(warm[name]) / med(health[name]), 2),
            "kernel_cpu_ms_per_warm_call": round(med(cpu[name]), 3),
            "per_round": [round(x, 2) for x in cpu[name]],
            # With /healthz's CPU in (each call was followed by one), per thread name.
            "thread_cpu_ms_per_call_and_healthz": {
                thread: round(med(values), 3) for thread, values in sorted(threads[name].items()) if med(values) > 0
            },
            "calls_per_s_16_clients": round(med(tput[name])), "per_round_calls_per_s": [round(x) for x in tput[name]],
            "errors": errors[name],
            "kernel_cpu_ms_per_call_16_clients": round(med(tp_cpu[name]), 3),
        }
    out["load_average_per_round"] = [round(x, 2) for x in loads]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
