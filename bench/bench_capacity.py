"""How many users with six warm agents one node holds: warm them in steps, measure, find the knee.

One kernel with the sandbox cap lifted (DREAMER_WORKERS_TOTAL) and workers kept warm for an
hour. At each step more users are made and each new user calls six starter agents once,
so each holds six warm sandboxed workers. Then, per step:

- memory: the PSS of every sandbox the kernel started (bwrap and what runs in it: the
  agents' workers and the user's tool servers, such as the calendar MCP server) and of the
  kernel with its own helper processes, from /proc/PID/smaps_rollup
  (kernel/workers/procmem.py): PSS adds up to what the machine really spends, shared
  pages split between their sharers;
- warm calls: `--calls` calls of a random user's random warm agent, one at a time: p50 and
  p99 latency, and the kernel's CPU per call;
- the machine's MemAvailable, so a step that made the machine swap shows.

The knee is the first step whose warm p50 is more than twice the first step's (CPU or
memory pressure), or none. The node's capacity in users is then projected from the
measured PSS per user: (24 GiB - the kernel - 2 GiB for the system) / PSS per user, and
the sandbox cap that holds that many users (six workers and their tool servers each) is
printed beside it.

    .venv/bin/python bench/bench_capacity.py --steps 4,8,16,32 --calls 200
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests" / "e2e"))

import kernelproc  # noqa: E402

from dreamer.kernel.workers.procmem import children_of, descendants, process_memory  # noqa: E402

# Six starter agents and a cheap read of each: what a user who uses them all keeps warm. A new
# user has no scope on the demo HR data, so sql-explorer's worker answers with a refusal: it
# still ran (the answer carries its invocation id), which is what warming needs.
WARM = [
    ("grocery", "list_items", {}),
    ("notes", "recent", {}),
    ("recipes", "suggest", {}),
    ("calendar", "agenda", {}),
    ("watch", "list_watches", {}),
    ("sql-explorer", "list_tables", {}),
]
NODE_GIB = 24
SYSTEM_GIB = 2


def cpu(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mem_available_mb() -> float:
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pss_mb(kernel_pid: int) -> tuple[float, float, int, int]:
    """PSS of the kernel with its own helper processes (not per user), PSS of every sandbox
    (a bwrap tree: an agent's worker or a user's tool server), and how many of each."""
    own = process_memory(kernel_pid)
    kernel_kb = own.pss_kb if own else 0
    sandboxes_kb, workers, tool_servers = 0, 0, 0
    for child in children_of(kernel_pid):
        members = descendants(child)
        kb = sum(m.pss_kb for m in (process_memory(pid) for pid in members) if m is not None)
        try:
            sandboxed = Path(f"/proc/{child}/exe").resolve().name == "bwrap"
            command = b" ".join(Path(f"/proc/{pid}/cmdline").read_bytes() for pid in members)
        except OSError:
            continue
        if not sandboxed:
            kernel_kb += kb
            continue
        sandboxes_kb += kb
        workers += b"dreamer.sdk.worker" in command
        tool_servers += b"dreamer.sdk.toolserver" in command
    return kernel_kb / 1024, sandboxes_kb / 1024, workers, tool_servers


def answered(done: object) -> bool:
    """The agent's worker answered: a result, or an error its invocation carries."""
    code, text = done.status_code, done.text  # type: ignore[attr-defined]
    return bool(code == 200 or "invocation_id" in text)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", default="4,8,16,32", help="users at each step, comma-separated")
    parser.add_argument("--calls", type=int, default=200, help="warm calls measured at each step")
    args = parser.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    env = {"DREAMER_WORKERS_TOTAL": str(max(steps) * len(WARM) + 16), "DREAMER_WARM_SECONDS": "3600",
           "DREAMER_LOG_LEVEL": "error"}
    kernel = kernelproc.start_kernel(Path(tempfile.mkdtemp()) / "home", env, wait_s=300)
    tokens: list[str] = []
    report: dict[str, object] = {"load_average_start": round(os.getloadavg()[0], 2), "steps": []}
    rows: list[dict[str, float]] = []
    try:
        with kernel.client() as admin:
            for target in steps:
                started = time.perf_counter()
                while len(tokens) < target:
                    made = admin.post("/v1/users", json={"name": f"cap{len(tokens)}"}, timeout=300)
                    assert made.status_code == 201, made.text
                    token = made.json()["token"]
                    with kernel.client(token) as c:
                        for agent, fn, body in WARM:
                            done = c.post(f"/v1/agents/{agent}/functions/{fn}", json={"args": body}, timeout=120)
                            assert answered(done), f"{agent}.{fn}: {done.text}"
                    tokens.append(token)
                warmed_s = time.perf_counter() - started
                clients = [kernel.client(t) for t in tokens]
                latencies: list[float] = []
                before = cpu(kernel.process.pid)
                for _ in range(args.calls):
                    c = random.choice(clients)
                    agent, fn, body = random.choice(WARM)
                    t0 = time.perf_counter()
                    done = c.post(f"/v1/agents/{agent}/functions/{fn}", json={"args": body}, timeout=120)
                    latencies.append(time.perf_counter() - t0)
                    assert answered(done), done.text
                cpu_ms = (cpu(kernel.process.pid) - before) / args.calls * 1000
                for c in clients:
                    c.close()
                kernel_mb, workers_mb, workers, tool_servers = pss_mb(kernel.process.pid)
                row = {
                    "users": target, "warm_workers": workers, "tool_servers": tool_servers, "warm_p50_ms": round(statistics.median(latencies) * 1000, 2),
                    "warm_p99_ms": round(pct(latencies, 99) * 1000, 2), "kernel_cpu_ms_per_call": round(cpu_ms, 3),
                    "kernel_pss_mb": round(kernel_mb, 1), "workers_pss_mb": round(workers_mb, 1),
                    "pss_mb_per_user": round(workers_mb / target, 2), "mem_available_mb": round(mem_available_mb()),
                    "seconds_to_warm_this_step": round(warmed_s, 1), "load_average": round(os.getloadavg()[0], 2),
                }
                rows.append(row)
                report["steps"].append(row)  # type: ignore[attr-defined]
                print(json.dumps(row), file=sys.stderr)
    finally:
        kernel.stop()
    first = rows[0]["warm_p50_ms"]
    knee = next((r["users"] for r in rows if r["warm_p50_ms"] > 2 * first), None)
    per_user = round(statistics.median(r["pss_mb_per_user"] for r in rows), 1)
    sandboxes_per_user = (rows[-1]["warm_workers"] + rows[-1]["tool_servers"]) / rows[-1]["users"]
    kernel_mb = rows[-1]["kernel_pss_mb"]
    users = int((NODE_GIB * 1024 - SYSTEM_GIB * 1024 - kernel_mb) // per_user)
    report.update({
        "knee_users": knee if knee is not None else f"none up to {steps[-1]} users (warm p50 stayed within 2x of the first step)",
        "pss_mb_per_user_with_6_warm_agents": per_user,
        f"projected_users_per_{NODE_GIB}_gib_node_by_memory": users,
        "sandboxes_per_user": sandboxes_per_user,
        "sandbox_cap_for_that_many": int(users * sandboxes_per_user),
        "default_sandbox_cap_holds_users": int(64 // sandboxes_per_user),
    })
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
