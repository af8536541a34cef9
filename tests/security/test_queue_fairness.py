"""Finding 3 of issue 14: one user's backlog must not starve anyone's background work.

`queue.due` decides who starts next, in SQL, on SQLite and PostgreSQL; the end-to-end
tests (test_queue_fairness_e2e.py) run the same attacks through a real kernel.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import insert

from dreamer.kernel.runs import queue
from dreamer.kernel.store.models import Invocation, User

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _users(store: Any, *names: str) -> dict[str, int]:
    with store.session() as s:
        rows = [User(name=n) for n in names]
        s.add_all(rows)
        s.flush()
        return {u.name: u.id for u in rows}


def _queue(store: Any, user_id: int, agent: str, n: int, start: datetime, step: timedelta = timedelta(seconds=1)) -> list[str]:
    rows = [
        dict(id="inv_" + uuid.uuid4().hex[:20], user_id=user_id, agent=agent, function="f", args={}, caller="trigger",
             status="queued", background=True, created_at=start + i * step, attempt=0, max_attempts=1)
        for i in range(n)
    ]
    with store.session() as s:
        s.execute(insert(Invocation), rows)  # one executemany: thousands of rows in a blink
    return [r["id"] for r in rows]


def test_a_users_backlog_does_not_hide_a_later_users_run(store: Any) -> None:
    """Bob queued 2,000 jobs first; my one webhook run is still offered, and first."""
    ids = _users(store, "bob", "me")
    _queue(store, ids["bob"], "spam", 2000, T0, timedelta(milliseconds=1))
    mine = _queue(store, ids["me"], "hook", 1, T0 + timedelta(hours=1))
    order = queue.due(store, per_user=4, per_agent=2, running_users={ids["bob"]: 2},
                      running_agents={(ids["bob"], "spam"): 2}, limit=10)
    # Bob's agent is at its limit, so he offers nothing; I am offered at once.
    assert [r[0] for r in order] == mine
    order = queue.due(store, per_user=4, per_agent=2, limit=1)
    assert [r[2] for r in order] == ["spam"]  # both idle: oldest first
    order = queue.due(store, per_user=4, per_agent=2, running_users={ids["bob"]: 1},
                      running_agents={(ids["bob"], "spam"): 1}, limit=1)
    assert [r[0] for r in order] == mine  # least loaded first, however old the other's backlog


def test_each_user_offers_only_what_they_could_start(store: Any) -> None:
    """Many agents of one user, many users: nobody offers more than their limits allow."""
    names = [f"u{i}" for i in range(30)]
    ids = _users(store, *names)
    for i, name in enumerate(names):
        for a in range(5):
            _queue(store, ids[name], f"agent{a}", 10, T0 + timedelta(seconds=i))
    order = queue.due(store, per_user=4, per_agent=2, limit=1000)
    per_user: dict[int, int] = {}
    per_agent: dict[tuple[int, str], int] = {}
    for _, user_id, agent in order:
        per_user[user_id] = per_user.get(user_id, 0) + 1
        per_agent[(user_id, agent)] = per_agent.get((user_id, agent), 0) + 1
    assert set(per_user) == set(ids.values()) and set(per_user.values()) == {4}
    assert max(per_agent.values()) == 1  # four agents of five, round-robin, not two of one
    # The first 30 offered are one per user: round-robin across users before anyone's second.
    assert len({user_id for _, user_id, _ in order[:30]}) == 30


def test_a_user_at_their_limit_offers_nothing_and_an_agent_at_its_limit_yields_to_siblings(store: Any) -> None:
    ids = _users(store, "bob", "me")
    _queue(store, ids["bob"], "a", 10, T0)
    _queue(store, ids["bob"], "b", 10, T0 + timedelta(hours=1))
    _queue(store, ids["me"], "c", 3, T0 + timedelta(hours=2))
    order = queue.due(store, per_user=4, per_agent=2, running_users={ids["bob"]: 4}, limit=100)
    assert {r[1] for r in order} == {ids["me"]} and len(order) == 2  # my per-agent limit
    order = queue.due(store, per_user=4, per_agent=2, running_users={ids["bob"]: 2},
                      running_agents={(ids["bob"], "a"): 2}, limit=100)
    bobs = [r[2] for r in order if r[1] == ids["bob"]]
    assert bobs == ["b", "b"]  # a is full; b's older rows wait no longer behind a's


def test_a_retry_waiting_for_its_delay_is_not_offered(store: Any) -> None:
    ids = _users(store, "me")
    (run_id,) = _queue(store, ids["me"], "a", 1, T0)
    with store.session() as s:
        s.get(Invocation, run_id).run_after = datetime.now(timezone.utc) + timedelta(hours=1)
    assert queue.due(store, per_user=4, per_agent=2) == []
