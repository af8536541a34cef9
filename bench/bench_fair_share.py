"""What issue 14's fair share and quotas cost: `queue.due` over a flooded queue, and the
per-call data-quota check (a fresh meter: a dictionary lookup; a stale one: a walk).

    .venv/bin/python bench/bench_fair_share.py [--users 50] [--rows 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

from sqlalchemy import insert

from dreamer.kernel.config import load_settings
from dreamer.kernel.runs import queue
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Invocation, User
from dreamer.kernel.users.quotas import DataMeter


def _ms(samples: list[float]) -> str:
    samples.sort()
    return f"p50 {statistics.median(samples) * 1000:.2f} ms, p99 {samples[int(len(samples) * 0.99) - 1] * 1000:.2f} ms"


def bench_due(users: int, rows: int, home: Path) -> None:
    store = Store(f"sqlite:///{home / 'kernel.db'}")
    store.migrate()
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    with store.session() as s:
        ids = []
        for i in range(users):
            u = User(name=f"u{i}")
            s.add(u)
            s.flush()
            ids.append(u.id)
        # One user floods (half the rows); the rest share the other half over 5 agents each.
        flood = [dict(id=uuid.uuid4().hex, user_id=ids[0], agent="spam", function="f", args={}, caller="t",
                      status="queued", background=True, created_at=t0 + timedelta(milliseconds=i), attempt=0,
                      max_attempts=1) for i in range(rows // 2)]
        rest = [dict(id=uuid.uuid4().hex, user_id=ids[1 + i % (users - 1)], agent=f"a{i % 5}", function="f", args={},
                     caller="t", status="queued", background=True, created_at=t0 + timedelta(hours=1, milliseconds=i),
                     attempt=0, max_attempts=1) for i in range(rows - rows // 2)]
        s.execute(insert(Invocation), flood + rest)
    samples, cpu = [], []
    for _ in range(50):
        started, used = time.perf_counter(), time.process_time()
        queue.due(store, per_user=4, per_agent=2, running_users={ids[0]: 2}, running_agents={(ids[0], "spam"): 2}, limit=32)
        samples.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
    # CPU time too: on a shared machine the wall clock mostly measures the wait for a core.
    print(f"queue.due, {rows} queued rows, {users} users (one holding half): wall {_ms(samples)}; CPU {_ms(cpu)}")
    store.dispose()


def bench_meter(home: Path) -> None:
    settings = load_settings(home=home)
    data = settings.agent_data_dir("me", "grocery")
    data.mkdir(parents=True)
    for i in range(1000):
        (data / f"f{i}").write_bytes(b"x" * 100)
    meter = DataMeter(settings)

    async def run() -> None:
        await meter.check("me")
        fresh = []
        for _ in range(2000):
            started = time.perf_counter()
            await meter.check("me")
            fresh.append(time.perf_counter() - started)
        stale = []
        for _ in range(50):
            meter._known.clear()
            started = time.perf_counter()
            await meter.check("me")
            stale.append(time.perf_counter() - started)
        print(f"data-quota check per call, meter fresh: {_ms(fresh)}")
        print(f"data-quota check, meter stale (walks 1,000 files in a thread): {_ms(stale)}")

    asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--rows", type=int, default=20000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench_due(args.users, args.rows, Path(tmp))
    with tempfile.TemporaryDirectory() as tmp:
        bench_meter(Path(tmp))


if __name__ == "__main__":
    main()
