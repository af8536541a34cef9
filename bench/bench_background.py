"""What a background invocation costs, through a real kernel with sandboxed workers.

Reports, from the kernel's own timestamps: the wait in the queue (created → started)
of one background call at a time, the run itself (started → finished), and the
throughput of a burst of background calls under the per-agent limit.

    .venv/bin/python bench/bench_background.py              # about half a minute
    .venv/bin/python bench/bench_background.py --json --runs 100 --burst 200
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests" / "e2e"))

from kernelproc import start_kernel, write_bundle  # noqa: E402

AGENT = '''
from dreamer.sdk import Context, function

@function(background=True)
def noop(ctx: Context, n: int = 0) -> int:
    """Does nothing, in the background."""
    return n
'''


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def ms(a: str, b: str) -> float:
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds() * 1000


def wait_all(client, ids: list[str]) -> list[dict]:
    done: dict[str, dict] = {}
    while len(done) < len(ids):
        for run_id in ids:
            if run_id not in done:
                run = client.get(f"/v1/invocations/{run_id}").json()
                if run["status"] in ("succeeded", "failed", "cancelled"):
                    done[run_id] = run
        time.sleep(0.02)
    return [done[i] for i in ids]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--per-agent", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        k = start_kernel(root / "home", {"DREAMER_BACKGROUND_PER_AGENT": str(opts.per_agent)})
        try:
            done = k.cli("install", str(write_bundle(root, "bg-bench", AGENT)), "--yes")
            assert done.returncode == 0, done.stderr
            with k.client() as c:
                call = lambda n: c.post("/v1/agents/bg-bench/functions/noop", json={"args": {"n": n}}).json()["invocation_id"]  # noqa: E731
                wait_all(c, [call(-1)])  # a warm worker
                queued, ran, answer = [], [], []
                for n in range(opts.runs):
                    t = time.perf_counter()
                    run_id = call(n)
                    answer.append((time.perf_counter() - t) * 1000)
                    [run] = wait_all(c, [run_id])
                    queued.append(ms(run["created_at"], run["started_at"]))
                    ran.append(ms(run["started_at"], run["finished_at"]))
                t = time.perf_counter()
                ids = [call(n) for n in range(opts.burst)]
                runs = wait_all(c, ids)
                burst_s = time.perf_counter() - t
                assert all(r["status"] == "succeeded" for r in runs)
        finally:
            k.stop()
    result = {
        "answer_ms": {"p50": pct(answer, 50), "p99": pct(answer, 99)},
        "queue_wait_ms": {"p50": pct(queued, 50), "p99": pct(queued, 99)},
        "run_ms": {"p50": pct(ran, 50), "p99": pct(ran, 99)},
        "burst": {"invocations": opts.burst, "per_agent": opts.per_agent, "seconds": round(burst_s, 2),
                  "per_second": round(opts.burst / burst_s, 1)},
    }
    if opts.json:
        print(json.dumps(result, indent=2))
        return
    print(f"answer to a background call (queued)  p50 {result['answer_ms']['p50']:.1f} ms  p99 {result['answer_ms']['p99']:.1f} ms")
    print(f"wait in the queue (created → started)  p50 {result['queue_wait_ms']['p50']:.1f} ms  p99 {result['queue_wait_ms']['p99']:.1f} ms")
    print(f"one attempt (started → finished)       p50 {result['run_ms']['p50']:.1f} ms  p99 {result['run_ms']['p99']:.1f} ms")
    b = result["burst"]
    print(f"burst of {b['invocations']} with {b['per_agent']} at a time per agent: {b['seconds']} s, {b['per_second']} invocations/s")


if __name__ == "__main__":
    main()
