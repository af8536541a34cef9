"""Kernels of several checkouts side by side: started together, measured in alternating blocks.

On a shared two-core machine a benchmark run a minute later sees another load; here every
kernel is measured in each round, one after the other, in alternating order, so each sees
the same moments. Each NAME=PYTHON names the interpreter of a checkout's own virtual
environment (its editable install decides which code the kernel runs); `:{"ENV": "1"}`
after it adds environment variables to that kernel.

    git worktree add --detach /tmp/base a584af2 && (cd /tmp/base && python3 -m venv .venv \
        && .venv/bin/pip install -q -e .)
    .venv/bin/python bench/bench_side_by_side.py base=/tmp/base/.venv/bin/python new=.venv/bin/python

Per round and kernel: N warm calls (latency, and the kernel's CPU from /proc/<pid>/stat),
N GET /healthz, N/2 plan_dinner alone and N/2 calling grocery (interleaved), and 10*N
calls from 16 lean clients (bench/loadgen.py). Prints medians over the rounds as JSON.
"""

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests" / "e2e"))
sys.path.insert(0, str(HERE))

import kernelproc  # noqa: E402
from loadgen import run as loadrun  # noqa: E402

def options() -> tuple[list[str], int, int]:
    """The kernels (NAME=PYTHON[:ENV_JSON]), --rounds and --n of the command line."""
    specs = [a for a in sys.argv[1:] if "=" in a]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 6
    n = int(sys.argv[sys.argv.index("--n") + 1]) if "--n" in sys.argv else 200
    return specs, rounds, n


def seeded_spans() -> int:
    """--seed-spans N: spans written into each kernel's store before it starts (a long-lived
    kernel's table, where the spans' index pages are many), by that kernel's own code."""
    return int(sys.argv[sys.argv.index("--seed-spans") + 1]) if "--seed-spans" in sys.argv else 0


@contextlib.contextmanager
def kernels_for(specs: list[str]) -> Iterator[dict[str, kernelproc.KernelProc]]:
    """A kernel for each NAME=PYTHON[:ENV_JSON], each with a home of its own; stopped at the end."""
    home = tempfile.mkdtemp()
    real = sys.executable
    kernels: dict[str, kernelproc.KernelProc] = {}
    seed = seeded_spans()
    try:
        for spec in specs:
            name, _, rest = spec.partition("=")
            python, _, env = rest.partition(":")
            extra = json.loads(env) if env else {}
            if seed:
                subprocess.run([python, str(HERE / "bench_span_export.py"), "--dir", str(Path(home) / name),
                                "--seed", str(seed), "--batches", "0"], env={**os.environ, **extra}, check=True,
                               stdout=sys.stderr)
            sys.executable = python  # start_kernel runs `sys.executable -m dreamer.host.server`
            kernels[name] = kernelproc.start_kernel(Path(home) / name, {"DREAMER_LOG_LEVEL": "error", **extra})
        sys.executable = real
        yield kernels
    finally:
        sys.executable = real
        for k in kernels.values():
            k.stop()


def cpu(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def main() -> None:
    specs, rounds, n = options()
    loads = [os.getloadavg()[0]]
    data: dict[str, dict[str, list[float]]] = {}
    with kernels_for(specs) as kernels:
        keys = ("warm", "cpu", "health", "plain", "nested", "tput", "tp_p50", "tp_p99", "tp_cpu", "errors")
        data = {name: {key: [] for key in keys} for name in kernels}
        clients = {name: k.client() for name, k in kernels.items()}

        def call(c: object, agent: str, fn: str, args: dict[str, object]) -> float:
            started = time.perf_counter()
            r = c.post(f"/v1/agents/{agent}/functions/{fn}", json={"args": args})  # type: ignore[attr-defined]
            assert r.status_code == 200, r.text
            return time.perf_counter() - started

        for c in clients.values():
            for _ in range(30):
                call(c, "grocery", "list_items", {})
            for _ in range(5):
                call(c, "recipes", "plan_dinner", {"add_to_grocery_list": True})
        for r in range(rounds):
            for name in list(kernels) if r % 2 == 0 else list(reversed(kernels)):
                k, c, d = kernels[name], clients[name], data[name]
                before = cpu(k.process.pid)
                d["warm"] += [call(c, "grocery", "list_items", {}) for _ in range(n)]
                d["cpu"].append((cpu(k.process.pid) - before) / n * 1000)
                for _ in range(n):
                    started = time.perf_counter()
                    c.get("/healthz")
                    d["health"].append(time.perf_counter() - started)
                for _ in range(n // 2):
                    d["plain"].append(call(c, "recipes", "plan_dinner", {"add_to_grocery_list": False}))
                    d["nested"].append(call(c, "recipes", "plan_dinner", {"add_to_grocery_list": True}))
                before = cpu(k.process.pid)
                res = asyncio.run(loadrun(k.url, "/v1/agents/grocery/functions/list_items", k.token, b'{"args": {}}',
                                          clients=16, total=n * 10))
                d["tp_cpu"].append((cpu(k.process.pid) - before) / (n * 10) * 1000)
                d["tput"].append(n * 10 / res.elapsed_s)
                d["errors"].append(res.errors)
                d["tp_p50"].append(statistics.median(res.latencies_s))
                d["tp_p99"].append(pct(res.latencies_s, 99))
            loads.append(os.getloadavg()[0])
    out: dict[str, object] = {}
    med = statistics.median
    for name, d in data.items():
        out[name] = {
            "warm_p50": ms(med(d["warm"])), "warm_p99": ms(pct(d["warm"], 99)),
            "kernel_cpu_ms_per_warm_call": round(med(d["cpu"]), 3), "per_round": [round(x, 2) for x in d["cpu"]],
            "healthz_p50": ms(med(d["health"])), "healthz_p99": ms(pct(d["health"], 99)),
            "ratio_warm_to_healthz": round(med(d["warm"]) / med(d["health"]), 2),
            "agent_to_agent_added": ms(med(d["nested"]) - med(d["plain"])),
            "calls_per_s_16_clients": round(med(d["tput"])), "per_round_calls_per_s": [round(x) for x in d["tput"]],
            "errors": sum(d["errors"]), "p50_16_clients": ms(med(d["tp_p50"])), "p99_16_clients": ms(med(d["tp_p99"])),
            "kernel_cpu_ms_per_call_16_clients": round(med(d["tp_cpu"]), 3),
        }
    out["load_average_per_round"] = [round(x, 2) for x in loads]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
