"""What a function call costs: cold start, warm call, and an agent-to-agent call.

Starts a real kernel (bwrap sandboxes) in a temporary DREAMER_HOME and measures
through the HTTP API, as a client sees it. Reports medians and ratios from one run.

    .venv/bin/python bench/bench_calls.py [--runs 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

from kernelproc import start_kernel  # noqa: E402  (the same launcher the tests use)


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        kernel = start_kernel(Path(tmp) / "home")
        first_start = time.perf_counter() - t0
        try:
            with kernel.client() as c:
                def call(agent: str, fn: str, a: dict) -> float:
                    t = time.perf_counter()
                    r = c.post(f"/v1/agents/{agent}/functions/{fn}", json={"args": a})
                    assert r.status_code == 200, r.text
                    return time.perf_counter() - t

                cold = call("grocery", "list_items", {})
                warm = [call("grocery", "list_items", {}) for _ in range(args.runs)]
                add = [call("grocery", "add_items", {"items": [f"item {i}"]}) for i in range(args.runs)]
                nested = [call("recipes", "plan_dinner", {"add_to_grocery_list": True}) for _ in range(args.runs // 2)]
                plain = [call("recipes", "plan_dinner", {"add_to_grocery_list": False}) for _ in range(args.runs // 2)]
                health = []
                for _ in range(args.runs):
                    t = time.perf_counter()
                    c.get("/healthz")
                    health.append(time.perf_counter() - t)
        finally:
            kernel.stop()
    report = {
        "first_start_s (migrate + 2 starter installs)": round(first_start, 2),
        "cold_call_ms (new sandboxed worker)": round(cold * 1000, 1),
        "warm_call_ms list_items": _median_ms(warm),
        "warm_call_ms add_items (db write)": _median_ms(add),
        "plan_dinner_ms without agent call": _median_ms(plain),
        "plan_dinner_ms with grocery.add_items": _median_ms(nested),
        "agent_to_agent_overhead_ms": round(_median_ms(nested) - _median_ms(plain), 2),
        "healthz_ms (HTTP floor)": _median_ms(health),
        "cold/warm ratio": round(cold / statistics.median(warm), 1),
        "runs": args.runs,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
