"""What an agent-to-agent call adds, kernels side by side (issue 23: at most 0.5 ms).

`recipes.plan_dinner` with `add_to_grocery_list` false (the plain call) and true (the same,
plus one `ctx.call("grocery", "add_items", ...)` of ingredients already on the list, so
the nested call writes nothing new). Per round and kernel: N plain calls, then N nested
ones, one after another from one client; the added latency is the median of the nested
calls less the median of the plain ones, and the kernel's CPU per call is measured for
each block (its own process: the workers' CPU is not in it), in nanoseconds from each of
its threads' schedstat (bench_cpu_pairs.py), with the medians of both blocks' CPU per call. Kernels as in
bench_call_threads.py (NAME=PYTHON[:ENV_JSON]), in alternating rounds; medians over the
rounds as JSON, with the load average after each round.

    .venv/bin/python bench/bench_agent_calls.py \\
        base=.venv/bin/python:'{"PYTHONPATH": "/tmp/base"}' new=.venv/bin/python --rounds 6 --n 200
"""

from __future__ import annotations

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

from bench_cpu_pairs import cpu_ns  # noqa: E402
from bench_side_by_side import kernels_for, ms, options  # noqa: E402

PLAN = "/v1/agents/recipes/functions/plan_dinner"


def main() -> None:
    specs, rounds, n = options()
    loads = [os.getloadavg()[0]]
    added: dict[str, list[float]] = defaultdict(list)
    plain_p50: dict[str, list[float]] = defaultdict(list)
    nested_p50: dict[str, list[float]] = defaultdict(list)
    cpu_added: dict[str, list[float]] = defaultdict(list)
    cpu_plain: dict[str, list[float]] = defaultdict(list)
    cpu_nested: dict[str, list[float]] = defaultdict(list)
    with kernels_for(specs) as kernels:
        clients = {name: k.client() for name, k in kernels.items()}

        def call(name: str, nested: bool) -> float:
            began = time.perf_counter()
            r = clients[name].post(PLAN, json={"args": {"add_to_grocery_list": nested}})
            took = time.perf_counter() - began
            assert r.status_code == 200, r.text
            return took

        for name in kernels:
            for _ in range(20):
                call(name, True)
                call(name, False)
        for r in range(rounds):
            for name in list(kernels) if r % 2 == 0 else list(reversed(kernels)):
                pid = kernels[name].process.pid
                spent = {False: 0.0, True: 0.0}
                took: dict[bool, list[float]] = {False: [], True: []}
                for nested in (False, True):
                    before = cpu_ns(pid)
                    took[nested] = [call(name, nested) for _ in range(n)]
                    spent[nested] = (cpu_ns(pid) - before) / 1e9
                plain, nest = statistics.median(took[False]), statistics.median(took[True])
                plain_p50[name].append(plain)
                nested_p50[name].append(nest)
                added[name].append(nest - plain)
                cpu_added[name].append((spent[True] - spent[False]) / n)
                cpu_plain[name].append(spent[False] / n)
                cpu_nested[name].append(spent[True] / n)
            loads.append(os.getloadavg()[0])
    med = statistics.median
    out: dict[str, object] = {}
    for name in kernels:
        out[name] = {
            "plain_p50": ms(med(plain_p50[name])), "nested_p50": ms(med(nested_p50[name])),
            "agent_to_agent_added_p50_ms": ms(med(added[name])),
            "per_round_added_ms": [ms(x) for x in added[name]],
            "kernel_cpu_added_ms_per_nested_call": ms(med(cpu_added[name])),
            "kernel_cpu_ms_per_plain_call": ms(med(cpu_plain[name])),
            "kernel_cpu_ms_per_nested_call": ms(med(cpu_nested[name])),
        }
    out["load_average_per_round"] = [round(x, 2) for x in loads]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
