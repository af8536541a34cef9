"""Tool calls through a real kernel: cold start of a sandboxed stdio tool server, warm
`dreamer call-tool` equivalents over HTTP, and an agent calling a tool through the kernel.

    .venv/bin/python bench/bench_tools.py --runs 200
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from kernelproc import start_kernel, write_bundle  # noqa: E402

CALLER = '''
from dreamer.sdk import Context, function

@function(exported=True)
def day(ctx: Context) -> dict:
    """Lists a day of the calendar tool."""
    return ctx.tools.call("calendar.list_events", {"start": "2026-12-03", "end": "2026-12-03"})
'''


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--cold", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kernel = start_kernel(Path(tmp) / "home", {"DREAMER_WARM_SECONDS": "0.5"})
        try:
            root = Path(tmp) / "agents"
            assert kernel.cli("install", str(write_bundle(root, "tool-bench", CALLER, required=["tool:calendar.list_events"])), "--yes").returncode == 0
            with kernel.client() as http:
                body = {"args": {"start": "2026-12-03", "end": "2026-12-03"}}

                def tool_call() -> None:
                    assert http.post("/v1/tools/calendar/list_events", json=body).status_code == 200

                cold = []
                for _ in range(args.cold):
                    time.sleep(1.5)  # past warm_seconds: the reaper stops the idle server
                    cold += timed(tool_call, 1)
            kernel.stop()
            kernel = start_kernel(Path(tmp) / "home")
            with kernel.client() as http:
                tool_call()  # warm it
                warm = timed(tool_call, args.runs)
                agent = timed(lambda: http.post("/v1/agents/tool-bench/functions/day", json={"args": {}}).raise_for_status(), args.runs)
                health = timed(lambda: http.get("/healthz").raise_for_status(), args.runs)
        finally:
            kernel.stop()
    rows = {
        "cold: a new sandboxed calendar server answering its first call": cold,
        "warm: POST /v1/tools/calendar/list_events": warm,
        "warm: an agent calling calendar.list_events through the kernel": agent,
        "GET /healthz": health,
    }
    result = {name: {"p50_ms": round(statistics.median(v), 1), "p99_ms": round(pct(v, 0.99), 1), "n": len(v)} for name, v in rows.items()}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for name, r in result.items():
        print(f"{name}: p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms (n={r['n']})")


if __name__ == "__main__":
    main()
