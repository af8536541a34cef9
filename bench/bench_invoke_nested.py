"""What an agent-to-agent call adds to the kernel's own work, in-process.

`Invoker.invoke` of `notes.outer`, whose worker (answering at once, as in bench_invoke.py)
either answers or first calls `lists.inner` through the `agents.call` syscall; file SQLite.
In blocks of 500 calls, plain and nested alternating: the CPU per call of each and how many
commits a call made. No HTTP, no process hop: the figure is the kernel's bookkeeping of the
nested call (its admission, its records, its caller's admission written first, the commits).

    .venv/bin/python bench/bench_invoke_nested.py
    PYTHONPATH=/tmp/variants/base .venv/bin/python bench/bench_invoke_nested.py   # another copy of the code
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import dreamer

ROOT = Path(next(iter(dreamer.__path__)))  # the checkout being measured
sys.path.insert(0, str(ROOT / "tests" / "store"))

import test_admission_durable as world  # noqa: E402
from opentelemetry import trace  # noqa: E402
from sqlalchemy import insert  # noqa: E402

from dreamer.kernel.config import load_settings  # noqa: E402
from dreamer.kernel.invocations.invoker import Invoker  # noqa: E402
from dreamer.kernel.invocations.principal import Caller, Principal  # noqa: E402
from dreamer.kernel.store.db import Store  # noqa: E402
from dreamer.kernel.store.models import User  # noqa: E402
from dreamer.kernel.store.writer import GroupWriter  # noqa: E402


class _Cache(world._Cache):
    """Two installed agents; notes may call lists."""

    def agent(self, user_id: int, agent: str) -> Any:
        if agent not in ("notes", "lists"):
            return None
        spec = SimpleNamespace(exported=True, confirm=False, background=False, retries=0)
        asked = ["agent:lists"] if agent == "notes" else []
        return SimpleNamespace(name=agent, bundle_path=Path("/nonexistent"), manifest=SimpleNamespace(asked_limits=None),
                               digest="", function=lambda name: spec, required=asked, optional=[])

    def grants(self, user_id: int, agent: str) -> frozenset[str]:
        return frozenset({"agent:lists"}) if agent == "notes" else frozenset()


class _Worker:
    nested = False

    async def request(self, method: str, params: dict[str, Any], *, syscalls: Any, **_: Any) -> dict[str, Any]:
        if params["function"] == "outer" and self.nested:
            await syscalls("agents.call", {"agent": "lists", "function": "inner", "args": {}})
        return {"value": "done"}

    def kill(self) -> None:  # pragma: no cover - the disk watch never starts here
        pass


def main() -> None:
    blocks, n = 10, 500
    home = Path(tempfile.mkdtemp())
    store = Store(f"sqlite:///{home / 'kernel.db'}")
    store.migrate()
    settings = load_settings(home=home / "home", database_url=f"sqlite:///{home / 'settings.db'}")
    with store.engine.begin() as conn:
        user_id = conn.execute(insert(User.__table__).values(name="ada", is_admin=False, timezone="UTC")
                               .returning(User.__table__.c.id)).scalar_one()
    worker = _Worker()
    invoker = Invoker(settings, store, world._Pool(worker), trace.get_tracer("bench"), _Cache(store),  # type: ignore[arg-type]
                      GroupWriter(store))
    ada = Principal(user_id, "ada", "UTC")

    async def run() -> dict[str, list[tuple[float, float]]]:
        for _ in range(300):
            await invoker.invoke(ada, "notes", "outer", {}, Caller("user"))
        seen: dict[str, list[tuple[float, float]]] = {"plain": [], "nested": []}
        for _ in range(blocks):
            for kind in seen:
                worker.nested = kind == "nested"
                batches, started = invoker.writer.batches, time.process_time()
                for _ in range(n):
                    await invoker.invoke(ada, "notes", "outer", {}, Caller("user"))
                seen[kind].append(((time.process_time() - started) / n * 1e6, (invoker.writer.batches - batches) / n))
        return seen

    try:
        seen = asyncio.run(run())
    finally:
        invoker.writer.close()
        store.dispose()
    med = statistics.median
    print(json.dumps({
        "code": str(ROOT), "load": os.getloadavg()[0],
        "plain_cpu_us": round(med(x for x, _ in seen["plain"])), "nested_cpu_us": round(med(x for x, _ in seen["nested"])),
        "added_cpu_us_median_of_blocks": round(med(b[0] - a[0] for a, b in zip(seen["plain"], seen["nested"]))),
        "commits_per_plain_call": round(med(c for _, c in seen["plain"]), 2),
        "commits_per_nested_call": round(med(c for _, c in seen["nested"]), 2),
    }))


if __name__ == "__main__":
    main()
