"""The pieces of kernel/cluster/ on a real PostgreSQL store, in one process: the bus's
acknowledged delivery, node leases, the leader lock, and node-aware claims and recovery."""

from __future__ import annotations

import threading
import time
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
    first.release()  # a node stepping down hands over at once
    second.tick()
    assert second.leading and current_leader(conninfo) == "b"
    assert events == ["a+", "a-", "b+"]
    second.release()
    assert current_leader(conninfo) is None


def test_a_killed_leaders_lock_goes_to_the_next_node(pg_store: Any) -> None:
    import psycopg

    conninfo = psycopg_conninfo(pg_store)
    events: list[str] = []
    first = LeaderLease(pg_store, conninfo, "a", lambda: events.append("a+"), lambda: events.append("a-"))
    second = LeaderLease(pg_store, conninfo, "b", lambda: events.append("b+"), lambda: events.append("b-"))
    first.tick()
    with psycopg.connect(conninfo, autocommit=True) as admin:  # as the node's process dying
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'dreamer-leader-a'")
    # The server drops the lock when the backend has exited, a moment later: the next
    # node's ticks (every few seconds in a runtime) take it then.
    for _ in range(200):
        second.tick()
        if second.leading:
            break
        time.sleep(0.05)
    assert second.leading and current_leader(conninfo) == "b"
    first.tick()  # the old leader notices on its next tick and steps down
    assert not first.leading and events == ["a+", "b+", "a-"]
    second.release()


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


def _expire(store: Any, user_id: int) -> None:
    """What the database clock does after a lease's time: simulated by moving the expiry back."""
    from dreamer.kernel.store.models import UserLease

    with store.session() as s:
        s.execute(update(UserLease).where(UserLease.user_id == user_id)
                  .values(expires_at=datetime(2020, 1, 1, tzinfo=timezone.utc)))


def test_a_user_lease_is_one_nodes_and_every_take_over_raises_the_fence(pg_store: Any) -> None:
    from dreamer.kernel.cluster import leases

    _node(pg_store, "a")
    _node(pg_store, "b")
    with pg_store.session() as s:
        user, _ = create_user(s, "alice")
        uid = user.id
    with pg_store.session() as s:
        assert leases.take(s, uid, "a", 10) == 1
    with pg_store.session() as s:
        assert leases.take(s, uid, "a", 10) == 1  # a renewal by the holder keeps the token
        assert leases.take(s, uid, "b", 10) is None  # held, unexpired: b may not
        found = leases.holder(s, uid, 10)
        assert found is not None and (found.node, found.fence, found.node_alive) == ("a", 1, True)
        assert leases.holds(s, uid, "a", 1) and not leases.holds(s, uid, "b", 1)
        assert leases.leased_elsewhere(s, "b") == [uid] and leases.leased_elsewhere(s, "a") == []
    _expire(pg_store, uid)  # a died: its lease ran out
    with pg_store.session() as s:
        assert leases.holder(s, uid, 10) is None
        assert leases.renew(s, "a", 10) == {}  # a stale holder cannot renew an expired lease
        assert leases.take(s, uid, "b", 10) == 2
    with pg_store.session() as s:
        # The old owner, back with its old token, is refused: by renewal and by the owner's check.
        assert leases.renew(s, "a", 10) == {}
        assert not leases.holds(s, uid, "a", 1) and leases.holds(s, uid, "b", 2)
        assert leases.take(s, uid, "a", 10) is None
        assert leases.renew(s, "b", 10) == {uid: 2}
        # Released (drain): free at once, and the token still only goes up.
        assert leases.release(s, uid, "b", 2)
    with pg_store.session() as s:
        assert leases.holder(s, uid, 10) is None
        assert leases.take(s, uid, "a", 10) == 3


def test_a_forwarded_request_is_accepted_only_as_signed() -> None:
    from dreamer.kernel.cluster import forward

    key = b"k" * 32
    headers = forward.sign(key, "POST", "/v1/agents/x/functions/f?a=1", 7, 3, "n2")
    signed = forward.verify(key, "post", "/v1/agents/x/functions/f?a=1", headers)
    assert isinstance(signed, forward.Signed) and (signed.origin, signed.user_id, signed.fence) == ("n2", 7, 3)
    assert "signature" in str(forward.verify(b"x" * 32, "POST", "/v1/agents/x/functions/f?a=1", headers))
    assert "signature" in str(forward.verify(key, "POST", "/v1/agents/x/functions/g?a=1", headers))
    assert "signature" in str(forward.verify(key, "POST", "/v1/agents/x/functions/f?a=1", headers | {forward.H_FENCE: "4"}))
    assert "lacks" in str(forward.verify(key, "POST", "/v1/x", {}))
    old = forward.sign(key, "GET", "/v1/me", 7, 3, "n2")
    import hashlib
    import hmac as hm

    old[forward.H_AT] = "1000.000"
    old[forward.H_SIG] = hm.new(key, forward._message("GET", "/v1/me", 7, 3, "n2", "1000.000"), hashlib.sha256).hexdigest()
    assert "older" in str(forward.verify(key, "GET", "/v1/me", old))
