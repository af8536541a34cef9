"""What a function call costs, through a real kernel with sandboxed workers.

Reports, as a table and as JSON (--json), medians and p99 from one run:
cold start of a sandboxed worker, a warm call through the HTTP API, an
agent-to-agent call, throughput with concurrent clients, idle worker memory, and
the baselines peer runtimes pay per action: a bare `python -c` subprocess and
(when a Docker engine answers) `docker exec` into a running container.

    .venv/bin/python bench/bench_calls.py            # about a minute
    .venv/bin/python bench/bench_calls.py --json --runs 300
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests" / "e2e"))
sys.path.insert(0, str(HERE))

from kernelproc import start_kernel  # noqa: E402  (the same launcher the tests use)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def summary(samples: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(samples) * 1000, 2), "p99_ms": round(pct(samples, 99) * 1000, 2),
            "n": len(samples)}


def bare_python(runs: int, code: str) -> list[float]:
    """A fresh interpreter per action: what a runtime without warm workers pays."""
    sdk_root = tempfile.mkdtemp()
    os.makedirs(os.path.join(sdk_root, "dreamer"))
    import dreamer.sdk

    os.symlink(os.path.dirname(dreamer.sdk.__file__), os.path.join(sdk_root, "dreamer", "sdk"))
    import sysconfig

    env = {"PYTHONPATH": os.pathsep.join([sdk_root, sysconfig.get_paths()["purelib"]]), "PATH": "/usr/bin:/bin"}
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-c", code], env=env, check=True)
        samples.append(time.perf_counter() - t)
    return samples


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process so far (Linux /proc)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cmdline(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def _is_worker_interpreter(pid: int) -> bool:
    cmd = _cmdline(pid)
    return bool(cmd) and b"python" in cmd[0] and b"dreamer.sdk.worker" in cmd


def worker_memory(kernel_pid: int) -> dict[str, object]:
    """Idle workers of this kernel, measured from /proc/PID/smaps_rollup (kernel/workers/procmem.py).

    Per worker: the sandboxed interpreter alone (RSS, PSS, USS) and the whole tree the
    kernel started for it (bwrap's processes included), so both what the agent's
    interpreter holds and what the machine gets back when the worker stops are shown.
    """
    from dreamer.kernel.workers.procmem import children_of, descendants, process_memory, tree_memory

    interpreters, trees = [], []
    for child in children_of(kernel_pid):
        members = descendants(child)
        workers = [pid for pid in members if _is_worker_interpreter(pid)]
        if not workers:
            continue
        own = process_memory(workers[0])
        if own is None:
            continue
        interpreters.append(own)
        trees.append(tree_memory(child))

    def median(values: list[float]) -> float | None:
        return round(statistics.median(values), 2) if values else None

    return {
        "workers": len(interpreters),
        "interpreter_rss_mb": median([m.rss_kb / 1024 for m in interpreters]),
        "interpreter_pss_mb": median([m.pss_kb / 1024 for m in interpreters]),
        "interpreter_uss_mb": median([m.uss_kb / 1024 for m in interpreters]),
        "tree_pss_mb": median([m.pss_kb / 1024 for m in trees]),
        "tree_uss_mb": median([m.uss_kb / 1024 for m in trees]),
    }


async def throughput(url: str, token: str, clients: int, total: int) -> dict[str, float]:
    """The same load through httpx: what a Python client sees (httpx's own CPU included)."""
    headers = {"Authorization": f"Bearer {token}"}
    latencies: list[float] = []
    errors = 0
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60,
                                 limits=httpx.Limits(max_connections=clients)) as c:
        queue = asyncio.Queue()
        for _ in range(total):
            queue.put_nowait(None)

        async def client() -> None:
            nonlocal errors
            while not queue.empty():
                queue.get_nowait()
                t = time.perf_counter()
                r = await c.post("/v1/agents/grocery/functions/list_items", json={"args": {}})
                latencies.append(time.perf_counter() - t)
                errors += r.status_code != 200

        start = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        elapsed = time.perf_counter() - start
    return {"calls_per_s": round(total / elapsed, 1), "clients": clients, "errors": errors, **summary(latencies)}


async def lean_throughput(url: str, token: str, clients: int, total: int) -> dict[str, float]:
    """The kernel's capacity: a load generator that, like wrk, costs almost nothing per request."""
    from loadgen import run

    result = await run(url, "/v1/agents/grocery/functions/list_items", token, b'{"args": {}}', clients=clients, total=total)
    return {"calls_per_s": round(total / result.elapsed_s, 1), "clients": clients, "errors": result.errors,
            **summary(result.latencies_s)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200, help="warm calls per measurement")
    parser.add_argument("--cold", type=int, default=8, help="cold starts to measure")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        kernel = start_kernel(Path(tmp) / "home", {"DREAMER_LOG_LEVEL": "error"})
        report["first_start_s"] = round(time.perf_counter() - t0, 2)
        try:
            with kernel.client() as c:
                def call(agent: str, fn: str, a: dict) -> float:
                    t = time.perf_counter()
                    r = c.post(f"/v1/agents/{agent}/functions/{fn}", json={"args": a})
                    assert r.status_code == 200, r.text
                    return time.perf_counter() - t

                cold, bare_import = [], []
                for _ in range(args.cold):
                    # Interleaved with the cold starts, so both see the same load on a shared machine.
                    bare_import.extend(bare_python(1, "import dreamer.sdk"))
                    # An uninstall evicts the agent's workers, so the next call starts a fresh one.
                    c.delete("/v1/agents/grocery")
                    from dreamer.agents.bundles import starter_bundles
                    from dreamer.contracts.archive import pack

                    folder = next(p for p in starter_bundles() if p.name == "grocery")
                    staged = c.post("/v1/bundles", content=pack(folder)).json()
                    c.post("/v1/agents", json={"bundle_id": staged["bundle_id"], "approve": True})
                    cold.append(call("grocery", "list_items", {}))
                report["cold_start_sandboxed"] = summary(cold)
                for _ in range(20):
                    call("grocery", "list_items", {})
                cpu_before = process_cpu_s(kernel.process.pid)
                report["warm_call"] = summary([call("grocery", "list_items", {}) for _ in range(args.runs)])
                # CPU time is steadier than wall time on a shared machine.
                report["kernel_cpu_ms_per_warm_call"] = round(
                    (process_cpu_s(kernel.process.pid) - cpu_before) / args.runs * 1000, 3
                )
                report["warm_call_db_write"] = summary(
                    [call("grocery", "add_items", {"items": [f"item {i % 50}"]}) for i in range(args.runs)]
                )
                for _ in range(5):
                    call("recipes", "plan_dinner", {"add_to_grocery_list": True})
                plain = [call("recipes", "plan_dinner", {"add_to_grocery_list": False}) for _ in range(args.runs // 2)]
                nested = [call("recipes", "plan_dinner", {"add_to_grocery_list": True}) for _ in range(args.runs // 2)]
                report["plan_dinner_alone"] = summary(plain)
                report["plan_dinner_with_agent_call"] = summary(nested)
                report["agent_to_agent_added_p50_ms"] = round(
                    (statistics.median(nested) - statistics.median(plain)) * 1000, 2
                )
                health = []
                for _ in range(args.runs):
                    t = time.perf_counter()
                    c.get("/healthz")
                    health.append(time.perf_counter() - t)
                report["http_floor_healthz"] = summary(health)
            report["throughput_16_clients"] = asyncio.run(lean_throughput(kernel.url, kernel.token, 16, args.runs * 10))
            report["throughput_16_httpx_clients"] = asyncio.run(throughput(kernel.url, kernel.token, 16, args.runs * 5))
            report["idle_worker_memory"] = worker_memory(kernel.process.pid)
        finally:
            kernel.stop()
    report["bare_python_import_sdk"] = summary(bare_import)
    report["bare_python_per_action"] = summary(bare_python(args.cold, "pass"))
    report["ratio_cold_sandboxed_to_bare_import"] = round(
        statistics.median(cold) / statistics.median(bare_import), 2
    )
    report["ratio_warm_call_to_bare_python_action"] = round(
        report["warm_call"]["p50_ms"] / report["bare_python_per_action"]["p50_ms"], 3  # type: ignore[index]
    )
    try:
        from docker_exec import docker_exec_roundtrip
    except ImportError:
        report["docker_exec_per_action"] = "not measured: bench/docker_exec.py is missing"
    else:
        try:
            report["docker_exec_per_action"] = summary(docker_exec_roundtrip(max(5, args.cold)))
        except Exception as exc:  # noqa: BLE001 - no engine here: say so rather than fail the whole benchmark
            report["docker_exec_per_action"] = f"not measured: {type(exc).__name__}: {exc}"
    if args.json:
        print(json.dumps(report, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="dreamer call path (one run; medians and p99)")
    for col in ("measurement", "p50 ms", "p99 ms", "other"):
        table.add_column(col)
    for key, value in report.items():
        if isinstance(value, dict) and "p50_ms" in value:
            extra = {k: v for k, v in value.items() if k not in ("p50_ms", "p99_ms")}
            table.add_row(key, str(value["p50_ms"]), str(value["p99_ms"]), ", ".join(f"{k}={v}" for k, v in extra.items()))
        else:
            table.add_row(key, "", "", json.dumps(value))
    Console().print(table)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
