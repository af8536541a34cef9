"""Time to the first byte of a chat reply, as the web app gets it: a browser session
(cookie + CSRF token, signed in automatically as the lone local user), POST /v1/chat,
the offline planner answering. Also the time to the last event and to each page, and with
--audit N the pages again once the user's audit log holds N more entries (a long-used
installation: /activity shows the latest 20 of them, picked in SQL).

    .venv/bin/python bench/bench_web_chat.py             # about half a minute
    .venv/bin/python bench/bench_web_chat.py --json --runs 200
    .venv/bin/python bench/bench_web_chat.py --audit 100000

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
PAGES = ("/", "/agents", "/permissions", "/activity")


def time_pages(browser: httpx.Client, times: int = 10) -> dict[str, float]:
    """Each page's median over `times` loads, in ms."""
    out = {}
    for path in PAGES:
        took = []
        for _ in range(times):
            started = time.perf_counter()
            assert browser.get(path).status_code == 200
            took.append((time.perf_counter() - started) * 1000)
        out[path] = statistics.median(took)
    return out


def seed_audit(db: Path, count: int) -> None:
    """`count` more entries in the first user's audit log, chained as the kernel chains them."""
    from sqlalchemy import create_engine

    from dreamer.kernel.audit.log import append

    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        for i in range(count):
            append(conn, user_id=1, actor="agent:grocery", action="functions.call", target="grocery.list_items",
                   decision="allow", invocation_id=f"inv_seed_{i}")
    engine.dispose()


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--audit", type=int, default=0, help="then time the pages with this many more audit entries")
    args = parser.parse_args()
    long_log: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        kernel = start_kernel(home)
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
                for path in PAGES:
                    for _ in range(10):
                        started = time.perf_counter()
                        assert browser.get(path).status_code == 200
                        pages.append((time.perf_counter() - started) * 1000)
                each = time_pages(browser)
                if args.audit:
                    kernel.stop()
                    seed_audit(home / "kernel.db", args.audit)
                    kernel = start_kernel(home, port=kernel.port)  # the browser keeps its address and cookie
                    long_log = time_pages(browser)  # the same browser session, kept in the database
        finally:
            kernel.stop()
    result = {
        "runs": args.runs,
        "first_byte_ms": {"median": statistics.median(first), "p95": pct(first, 95), "max": max(first)},
        "last_event_ms": {"median": statistics.median(done), "p95": pct(done, 95)},
        "page_ms": {"median": statistics.median(pages), "p95": pct(pages, 95), "first_page_with_sign_in": first_page_ms},
        "each_page_median_ms": each,
        "each_page_median_ms_with_audit": {"entries_added": args.audit, **long_log} if args.audit else None,
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
    print("  each page, median: " + "   ".join(f"{path} {ms:.1f} ms" for path, ms in each.items()))
    if long_log:
        print(f"  with {args.audit} more audit entries: " + "   ".join(f"{path} {ms:.1f} ms" for path, ms in long_log.items()))


if __name__ == "__main__":
    main()
