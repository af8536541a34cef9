"""The call path's statements on the DBAPI cursor (kernel/store/hot.py) store exactly what
Connection.execute stores, read back the same through the ORM, and fail the same way."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import bindparam, insert, select, text, update
from sqlalchemy.exc import IntegrityError

from dreamer.kernel.store.db import Store
from dreamer.kernel.store.hot import HotStatement
from dreamer.kernel.store.models import AuditEntry, Invocation, InvocationLog, Span, User
from dreamer.kernel.store.tables import table

NOW = datetime(2026, 12, 6, 1, 2, 3, 456789, tzinfo=timezone.utc)


def _user(store: Store) -> int:
    with store.session() as s:
        user = User(name="me")
        s.add(user)
        s.flush()
        return user.id


def _invocation(uid: int, id: str, **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict(
        id=id, user_id=uid, agent="grocery", function="list_items", args={"items": ["é", 1, None, 2.5]},
        caller="user", parent_id=None, status="running", attempt=1, created_at=NOW, started_at=NOW,
        trace_id=None, background=False, max_attempts=1, run_after=None, trigger=None, node=None,
    )
    row.update(over)
    return row


def _raw(store: Store, tablename: str, key: str, values: list[str]) -> list[tuple[Any, ...]]:
    """The stored values as the database returns them, without SQLAlchemy's result processing."""
    with store.engine.connect() as conn:
        rows = conn.exec_driver_sql(f"SELECT * FROM {tablename}").fetchall()
        columns = list(conn.exec_driver_sql(f"SELECT * FROM {tablename}").keys())
    index = columns.index(key)
    by_key = {row[index]: tuple(v for c, v in zip(columns, row) if c not in ("id", "seq") or c == key) for row in rows}
    return [tuple(x for x in by_key[v] if x != v) for v in values]


def test_rows_are_stored_as_connection_execute_stores_them(store: Store) -> None:
    uid = _user(store)
    invocations = table(Invocation)
    core = insert(invocations)
    hot = HotStatement(core, tuple(_invocation(uid, "x")))
    with store.engine.begin() as conn:
        conn.execute(core, _invocation(uid, "inv_core"))
        hot.execute(conn, _invocation(uid, "inv_hot"))
        conn.execute(core, _invocation(uid, "inv_core_bg", background=True, trigger={"type": "cron", "name": "n"},
                                       status="queued", started_at=None, trace_id="ab" * 16, node="n1"))
        hot.execute(conn, _invocation(uid, "inv_hot_bg", background=True, trigger={"type": "cron", "name": "n"},
                                      status="queued", started_at=None, trace_id="ab" * 16, node="n1"))
    assert _raw(store, "invocations", "id", ["inv_core"]) == _raw(store, "invocations", "id", ["inv_hot"])
    assert _raw(store, "invocations", "id", ["inv_core_bg"]) == _raw(store, "invocations", "id", ["inv_hot_bg"])

    # An UPDATE with a literal of its own (status == "running") and JSON None.
    finish = (
        update(invocations)
        .where(invocations.c.id == bindparam("run_id"), invocations.c.status == "running")
        .values(status=bindparam("status"), result=bindparam("result"), finished_at=bindparam("finished_at"),
                run_after=bindparam("run_after"))
    )
    hot_finish = HotStatement(finish, ("run_id", "status", "result", "finished_at", "run_after"))
    later = NOW + timedelta(seconds=1)
    with store.engine.begin() as conn:
        conn.execute(finish, dict(run_id="inv_core", status="succeeded", result=None, finished_at=later, run_after=None))
        hot_finish.execute(conn, dict(run_id="inv_hot", status="succeeded", result=None, finished_at=later, run_after=None))
        # Not running: neither changes the row.
        conn.execute(finish, dict(run_id="inv_core_bg", status="failed", result={"a": [1]}, finished_at=later, run_after=later))
        hot_finish.execute(conn, dict(run_id="inv_hot_bg", status="failed", result={"a": [1]}, finished_at=later, run_after=later))
    assert _raw(store, "invocations", "id", ["inv_core"]) == _raw(store, "invocations", "id", ["inv_hot"])
    assert _raw(store, "invocations", "id", ["inv_core_bg"]) == _raw(store, "invocations", "id", ["inv_hot_bg"])
    with store.session() as s:
        core_row, hot_row = s.get(Invocation, "inv_core"), s.get(Invocation, "inv_hot")
        assert core_row is not None and hot_row is not None
        for column in Invocation.__table__.columns:
            if column.name != "id":
                assert getattr(core_row, column.key) == getattr(hot_row, column.key), column.name


def test_many_rows_and_autoincrement_keys(store: Store) -> None:
    logs = table(InvocationLog)
    keys = ("invocation_id", "at", "stream", "level", "message")
    hot = HotStatement(insert(logs), keys)
    rows = [dict(invocation_id=f"inv_{i}", at=NOW, stream="log", level="info", message=f"line {i} ✓") for i in range(3)]
    with store.engine.begin() as conn:
        conn.execute(insert(logs), rows)
        hot.execute(conn, [dict(r, invocation_id=r["invocation_id"] + "h") for r in rows])
        hot.execute(conn, [])  # nothing to write
    with store.session() as s:
        stored = s.scalars(select(InvocationLog).order_by(InvocationLog.id)).all()
    assert [r.id for r in stored] == list(range(1, 7))
    assert [(r.at, r.stream, r.message) for r in stored[:3]] == [(r.at, r.stream, r.message) for r in stored[3:]]

    spans = table(Span)
    values = dict(span_id="a" * 16, trace_id="b" * 32, parent_span_id=None, name="invoke_agent x", kind="internal",
                  start_ns=1, end_ns=2_000_000, duration_ms=1.999, status="ok",
                  attributes={"dreamer.function": "f", "n": [1, 2]}, invocation_id="inv_1")
    with store.engine.begin() as conn:
        conn.execute(insert(spans), values)
        HotStatement(insert(spans), tuple(values)).execute(conn, dict(values, span_id="c" * 16))
    assert _raw(store, "spans", "span_id", ["a" * 16]) == _raw(store, "spans", "span_id", ["c" * 16])


def test_a_statement_that_needs_a_default_is_refused() -> None:
    store = Store("sqlite://")
    store.migrate()
    audit = table(AuditEntry)
    hot = HotStatement(insert(audit), ("seq", "user_id", "actor", "action", "target", "scope", "decision",
                                        "invocation_id", "prev_hash", "hash"))  # no "at", no "detail": defaults
    with store.engine.begin() as conn, pytest.raises(ValueError, match="cannot fill"):
        hot.execute(conn, {})


def test_database_errors_are_wrapped_as_sqlalchemy_wraps_them(store: Store) -> None:
    uid = _user(store)
    hot = HotStatement(insert(table(Invocation)), tuple(_invocation(uid, "x")))
    with store.engine.begin() as conn:
        hot.execute(conn, _invocation(uid, "inv_1"))
    with pytest.raises(IntegrityError), store.engine.begin() as conn:
        hot.execute(conn, _invocation(uid, "inv_1"))
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM invocations")).scalar() == 1
