"""A new account, side by side across checkouts: `POST /v1/users` (the user, its token and
every starter agent installed), then that user's first call of each starter agent.

Kernels of each checkout start together and are measured in alternating blocks, so each
sees the same moments of a shared machine (as bench_side_by_side.py does). NAME=PYTHON
names the interpreter of a checkout's own virtual environment.

    git worktree add --detach /tmp/base 72407ab && (cd /tmp/base && python3 -m venv .venv \\
        && .venv/bin/pip install -q -e .)
    .venv/bin/python bench/bench_signup.py base=/tmp/base/.venv/bin/python new=.venv/bin/python --rounds 4 --users 3

Prints, per kernel, the median sign-up time, the median first call of a starter for a new
user (a cold worker), and the kernel's CPU per sign-up, as JSON with the load average.
"""

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests" / "e2e"))

import kernelproc  # noqa: E402

FIRST_CALLS = [("grocery", "list_items", {}), ("notes", "recent", {}), ("recipes", "suggest", {})]


def cpu(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def arg(name: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def main() -> None:
    specs = [a for a in sys.argv[1:] if "=" in a]
    rounds, users = arg("--rounds", 4), arg("--users", 3)
    home = tempfile.mkdtemp()
    real = sys.executable
    kernels: dict[str, kernelproc.KernelProc] = {}
    loads = [os.getloadavg()[0]]
    data: dict[str, dict[str, list[float]]] = {}
    try:
        for spec in specs:
            name, _, python = spec.partition("=")
            sys.executable = python  # start_kernel runs `sys.executable -m dreamer.host.server`
            kernels[name] = kernelproc.start_kernel(Path(home) / name, {"DREAMER_LOG_LEVEL": "error"})
        sys.executable = real
        data = {name: {"signup": [], "cpu": [], "first_call": []} for name in kernels}
        for r in range(rounds):
            for name in list(kernels) if r % 2 == 0 else list(reversed(kernels)):
                k, d = kernels[name], data[name]
                with k.client() as admin:
                    for u in range(users):
                        before, started = cpu(k.process.pid), time.perf_counter()
                        made = admin.post("/v1/users", json={"name": f"r{r}u{u}"}, timeout=300)
                        d["signup"].append(time.perf_counter() - started)
                        d["cpu"].append(cpu(k.process.pid) - before)
                        assert made.status_code == 201, made.text
                        with k.client(made.json()["token"]) as c:
                            for agent, fn, args in FIRST_CALLS:
                                started = time.perf_counter()
                                done = c.post(f"/v1/agents/{agent}/functions/{fn}", json={"args": args}, timeout=120)
                                d["first_call"].append(time.perf_counter() - started)
                                assert done.status_code == 200, done.text
            loads.append(os.getloadavg()[0])
    finally:
        sys.executable = real
        for k in kernels.values():
            k.stop()
    med = statistics.median
    out: dict[str, object] = {
        name: {"signup_p50_ms": round(med(d["signup"]) * 1000), "kernel_cpu_s_per_signup": round(med(d["cpu"]), 3),
               "first_call_of_a_starter_p50_ms": round(med(d["first_call"]) * 1000), "signups": len(d["signup"])}
        for name, d in data.items()
    }
    out["load_average_per_round"] = [round(x, 2) for x in loads]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
