"""The pieces of kernel/cluster/ on a real PostgreSQL store, in one process: the bus's
acknowledged delivery, node leases, the leader lock, and node-aware claims and recovery."""

from __future__ import annotations

import threading
import uuid
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import select, text, update

from dreamer.kernel.cluster import nodes
from dreamer.kernel.cluster.bus import ClusterBus, psycopg_conninfo
from dreamer.kernel.cluster.leader import LeaderLease, current_leader
from dreamer.kernel.runs import queue
from dreamer.kernel.store.models import ClusterNode, Invocation
from dreamer.kernel.users.accounts import create_user


def _node(store: Any, name: str, lease_s: float = 10.0) -> nodes.NodeIdentity:
    me = nodes.NodeIdentity(name, f"http://127.0.0.1/{name}", lease_s)
    with store.session() as s:
        nodes.register(s, me)
    return me


def test_a_change_published_by_one_node_is_applied_by_the_others_before_publish_returns(pg_store: Any) -> None:
    a, b, c = (_node(pg_store, n) for n in ("a", "b", "c"))
    heard: dict[str, list[dict[str, Any]]] = {"b": [], "c": []}
    buses = [ClusterBus(pg_store, a)]
    for me in (b, c):
        bus = ClusterBus(pg_store, me, handlers={"forget": heard[me.name].append})
        buses.append(bus)
    try:
        for bus in buses:
            bus.start()
            assert bus.connected.is_set()
        for n in range(5):
            buses[0].publish("forget", {"user_id": n, "agent": "recipes"})
            # No waiting here: publish returned only once every live node applied it.
            assert [e["user_id"] for e in heard["b"]] == list(range(n + 1))
            assert [e["user_id"] for e in heard["c"]] == list(range(n + 1))
    finally:
        for bus in buses:
            bus.stop()


def test_a_name_held_by_a_live_heartbeat_is_refused_and_a_stale_one_is_lost(pg_store: Any) -> None:
    import pytest

    from dreamer.contracts.errors import DreamerError

    me = _node(pg_store, "n1", lease_s=5)
    with pytest.raises(DreamerError, match="already running"):
        _node(pg_store, "n1", lease_s=5)
    with pg_store.session() as s:
        assert nodes.lost(s, 5) == []
        s.execute(update(ClusterNode).where(ClusterNode.name == "n1")
                  .values(heartbeat_at=datetime(2020, 1, 1, tzinfo=timezone.utc)))
    with pg_store.session() as s:
        assert nodes.lost(s, 5) == ["n1"]
        assert [n["health"] for n in nodes.listing(s, 5)] == ["lost"]
    _node(pg_store, me.name, lease_s=5)  # a stale name may be taken again
    with pg_store.session() as s:
        assert nodes.beat(s, "n1") == (True, False) and nodes.lost(s, 5) == []
        nodes.drain(s, "n1")
    with pg_store.session() as s:
        assert nodes.beat(s, "n1") == (True, True)
        assert [n["health"] for n in nodes.listing(s, 5)] == ["draining"]
        with pytest.raises(DreamerError, match="no running node"):
            nodes.drain(s, "nobody")
    with pg_store.session() as s:
        nodes.leave(s, "n1")
    with pg_store.session() as s:
        assert nodes.beat(s, "n1") == (False, False)
        assert [n["health"] for n in nodes.listing(s, 5)] == ["stopped"]


def test_one_leader_at_a_time_and_the_next_takes_over_when_its_connection_ends(pg_store: Any) -> None:
    conninfo = psycopg_conninfo(pg_store)
    events: list[str] = []
    first = LeaderLease(pg_store, conninfo, "a", lambda: events.append("a+"), lambda: events.append("a-"))
    second = LeaderLease(pg_store, conninfo, "b", lambda: events.append("b+"), lambda: events.append("b-"))
    first.tick()
    second.tick()
    assert first.leading and not second.leading and current_leader(conninfo) == "a"
    first.release()  # as a killed node's connection ending
    second.tick()
    assert second.leading and current_leader(conninfo) == "b"
    assert events == ["a+", "a-", "b+"]
    second.release()
    assert current_leader(conninfo) is None


def _queued(store: Any, user_id: int, n: int) -> list[str]:
    ids = []
    with store.session() as s:
        for _ in range(n):
            run_id = "inv_" + uuid.uuid4().hex
            s.add(Invocation(id=run_id, user_id=user_id, agent="bot", function="slow", args={}, caller="user",
                             status="queued", attempt=0, background=True, max_attempts=3))
            ids.append(run_id)
    return ids


def test_claims_are_exclusive_carry_the_node_and_recovery_takes_only_that_nodes_attempts(pg_store: Any) -> None:
    with pg_store.session() as s:
        user, _ = create_user(s, "alice")
        user_id = user.id
    ids = _queued(pg_store, user_id, 4)
    # Two nodes race for every row: each row is claimed exactly once.
    won: dict[str, list[str]] = {"a": [], "b": []}

    def race(node: str) -> None:
        for run_id in ids:
            if queue.claim(pg_store, run_id, node) is not None:
                won[node].append(run_id)

    threads = [threading.Thread(target=race, args=(n,)) for n in won]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(won["a"] + won["b"]) == sorted(ids)
    with pg_store.session() as s:
        rows = {r.id: r.node for r in s.scalars(select(Invocation))}
    assert all(rows[i] == n for n in won for i in won[n])
    users, agents = queue.running_counts(pg_store)
    assert users[user_id] == 4 and agents[(user_id, "bot")] == 4
    # Node a died: only its attempts go back to the queue, each once even with two takers.
    first = queue.recover(pg_store, node="a")
    again = queue.recover(pg_store, node="a")
    assert first == {"requeued": len(won["a"]), "failed": 0} and again == {"requeued": 0, "failed": 0}
    with pg_store.session() as s:
        status = {r.id: (r.status, r.node) for r in s.scalars(select(Invocation))}
        assert s.scalar(text("SELECT count(*) FROM invocation_logs")) == len(won["a"])
    assert all(status[i] == ("queued", None) for i in won["a"])
    assert all(status[i] == ("running", "b") for i in won["b"])
