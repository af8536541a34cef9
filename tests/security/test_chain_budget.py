"""One call cannot set off unbounded work through events (issue 24, finding 12).

A real kernel: an agent whose `ping` event triggers itself, each run emitting it twice.
Depth alone would allow 2 + 4 + ... + 2^8 = 510 runs; the chain's budget stops it at
MAX_CHAIN_RUNS, with one audit entry saying so.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update
from kernelproc import KernelProc, start_kernel, write_bundle

from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ChainRun, User, utcnow
from dreamer.kernel.triggers.chains import MAX_CHAIN_RUNS, spend

pytestmark = pytest.mark.timeout(400)
ECHO = '''
from dreamer.sdk import Context, function

@function(exported=True)
def start(ctx: Context) -> list:
    """Emits the first ping."""
    return ctx.emit_event("ping", {"n": 0})

@function
def on_ping(ctx: Context, event: dict) -> int:
    """Pings twice more."""
    ctx.emit_event("ping", {"n": 1})
    ctx.emit_event("ping", {"n": 2})
    return 2
'''


def _fn(name: str, params: dict, exported: bool) -> dict:
    return {"name": name, "description": name, "parameters": {"type": "object", "properties": params,
            "additionalProperties": False}, "result": {}, "exported": exported, "background": False,
            "confirm": False, "retries": 0, "examples": []}


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    root = tmp_path_factory.mktemp("chain")
    k = start_kernel(root / "home", {"DREAMER_BACKGROUND_PER_AGENT": "2"}, wait_s=240)
    bundle = write_bundle(root, "echo", ECHO, required=["schedule"])
    with (bundle / "agent.yaml").open("a") as f:
        f.write("events: [ping]\ntriggers:\n  - {type: event, event: echo.ping, entrypoint: on_ping, name: again}\n")
    (bundle / "functions.json").write_text(json.dumps({"format": 1, "functions": [
        _fn("start", {}, True), _fn("on_ping", {"event": {"type": "object"}}, False)]}))
    done = k.cli("install", str(bundle), "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    yield k
    k.stop()


def _count(home: Path, sql: str) -> int:
    db = sqlite3.connect(home / "kernel.db")
    try:
        return int(db.execute(sql).fetchone()[0])
    finally:
        db.close()


def test_a_self_triggering_event_stops_at_the_chain_budget(kernel: KernelProc) -> None:
    with kernel.client() as c:
        r = c.post("/v1/agents/echo/functions/start", json={"args": {}})
    assert r.status_code == 200, r.text
    runs = "select count(*) from invocations where agent = 'echo' and function = 'on_ping'"
    last, stable_since, deadline = -1, time.monotonic(), time.monotonic() + 300
    while time.monotonic() < deadline:
        now = _count(kernel.home, runs)
        if now != last:
            last, stable_since = now, time.monotonic()
        elif time.monotonic() - stable_since > 8:
            break
        time.sleep(1)
    assert last == MAX_CHAIN_RUNS, last
    assert _count(kernel.home, "select count(*) from audit_log where action = 'triggers.chain_budget'") == 1
    # Another call starts a chain of its own, with a budget of its own.
    with kernel.client() as c:
        assert c.post("/v1/agents/echo/functions/start", json={"args": {}}).status_code == 200
    time.sleep(3)
    assert _count(kernel.home, runs) > MAX_CHAIN_RUNS


def test_the_budget_outlives_a_restart_and_is_shared_by_nodes(store: Store) -> None:
    """The count is in the store: a second kernel on the same database (a restart, or
    another node) continues a chain's count instead of starting it afresh."""
    with store.session() as s:
        user = User(name="chains")
        s.add(user)
        s.flush()
        user_id = user.id
    for expected in range(1, MAX_CHAIN_RUNS + 1):
        with store.session() as s:
            assert spend(s, "inv_runaway", user_id) == expected
    other = Store(store.url.render_as_string(hide_password=False))  # the next kernel process on the same database
    try:
        with other.session() as s:
            assert spend(s, "inv_runaway", user_id) == MAX_CHAIN_RUNS + 1
        with other.session() as s:
            assert spend(s, "inv_fresh", user_id) == 1  # another chain has a budget of its own
        # A chain untouched for a day is pruned when a new one starts.
        with other.session() as s:
            s.execute(update(ChainRun).where(ChainRun.chain == "inv_runaway").values(updated_at=utcnow() - timedelta(days=2)))
        with other.session() as s:
            assert spend(s, "inv_newer", user_id) == 1
            assert s.get(ChainRun, "inv_runaway") is None
    finally:
        other.dispose()
