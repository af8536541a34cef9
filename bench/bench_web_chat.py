"""Time to the first byte of a chat reply, as the web app gets it: a browser session
(cookie + CSRF token, signed in automatically as the lone local user), POST /v1/chat,
the offline planner answering. Also the time to the last event and to a page.

    .venv/bin/python bench/bench_web_chat.py             # about half a minute
    .venv/bin/python bench/bench_web_chat.py --json --runs 200

First byte = the `start` event (the conversation id and "offline"): what the page
turns into a reply bubble. The rest of the stream follows as the calls run.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "tests" / "e2e"))

from kernelproc import start_kernel  # noqa: E402

MESSAGES = ["what's on my grocery list", "add milk to my grocery list", "what's on my calendar tomorrow"]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kernel = start_kernel(Path(tmp) / "home")
        try:
            with httpx.Client(base_url=kernel.url, timeout=60) as browser:
                page_started = time.perf_counter()
                page = browser.get("/")
                first_page_ms = (time.perf_counter() - page_started) * 1000
                csrf = re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
                headers = {"X-CSRF-Token": csrf}
                first, done = [], []
                for i in range(args.runs + 3):  # the first three warm the workers up
                    started = time.perf_counter()
                    with browser.stream("POST", "/v1/chat", json={"message": MESSAGES[i % len(MESSAGES)]},
                                        headers=headers) as r:
                        chunks = r.iter_raw()
                        next(chunks)
                        ttfb = time.perf_counter() - started
                        for _ in chunks:
                            pass
                        total = time.perf_counter() - started
                    if i >= 3:
                        first.append(ttfb * 1000)
                        done.append(total * 1000)
                pages = []
                for path in ("/", "/agents", "/permissions", "/activity"):
                    for _ in range(10):
                        started = time.perf_counter()
                        assert browser.get(path).status_code == 200
                        pages.append((time.perf_counter() - started) * 1000)
        finally:
            kernel.stop()
    result = {
        "runs": args.runs,
        "first_byte_ms": {"median": statistics.median(first), "p95": pct(first, 95), "max": max(first)},
        "last_event_ms": {"median": statistics.median(done), "p95": pct(done, 95)},
        "page_ms": {"median": statistics.median(pages), "p95": pct(pages, 95), "first_page_with_sign_in": first_page_ms},
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"chat, offline planner, {args.runs} turns through a browser session")
    print(f"  first byte   median {result['first_byte_ms']['median']:.1f} ms   p95 {result['first_byte_ms']['p95']:.1f} ms"
          f"   max {result['first_byte_ms']['max']:.1f} ms")
    print(f"  last event   median {result['last_event_ms']['median']:.1f} ms   p95 {result['last_event_ms']['p95']:.1f} ms")
    print(f"pages (/, /agents, /permissions, /activity)   median {result['page_ms']['median']:.1f} ms"
          f"   p95 {result['page_ms']['p95']:.1f} ms")


if __name__ == "__main__":
    main()
