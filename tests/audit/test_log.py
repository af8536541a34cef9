"""The audit chain: appends, tamper detection, concurrency, hostile inputs."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import select, text

from dreamer.kernel.audit.log import GENESIS_HASH, VerifyResult, append, compute_hash, entry_dict, verify
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import AuditEntry


def _append(store: Store, n: int, **overrides: Any) -> None:
    with store.session() as session:
        for i in range(n):
            fields: dict[str, Any] = {
                "user_id": 1,
                "actor": "agent:recipes",
                "action": "agents.call",
                "target": f"calendar.add_{i}",
                "decision": "deny" if i % 2 else "allow",
                "scope": "agent:calendar",
                "detail": {"i": i, "why": "grant missing" if i % 2 else None},
                "invocation_id": f"inv-{i}",
            }
            fields.update(overrides)
            append(session, **fields)


def _verify(store: Store) -> VerifyResult:
    with store.session() as session:
        return verify(session)


def _sql(store: Store, *statements: str, **params: Any) -> None:
    with store.engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement), params)


def _seqs(store: Store) -> list[int]:
    with store.session() as session:
        return list(session.scalars(select(AuditEntry.seq).order_by(AuditEntry.seq)))


# --- appending ---------------------------------------------------------------------


def test_empty_log_verifies(store: Store) -> None:
    assert _verify(store) == VerifyResult(ok=True, entries=0, first_bad=None, reason=None)


def test_first_entry_links_to_genesis_and_hash_format_is_pinned(store: Store) -> None:
    with store.session() as session:
        entry = append(
            session, user_id=7, actor="user:me", action="grants.revoke", target="recipes",
            decision="allow", scope="net:*.example.com", detail={"b": 1, "a": "é"}, invocation_id=None,
        )
    assert entry.seq == 1
    assert entry.prev_hash == GENESIS_HASH == "0" * 64
    body = {
        "seq": 1,
        "at": entry.at.astimezone(timezone.utc).isoformat(timespec="microseconds"),
        "user_id": 7,
        "actor": "user:me",
        "action": "grants.revoke",
        "target": "recipes",
        "scope": "net:*.example.com",
        "decision": "allow",
        "detail": {"a": "é", "b": 1},
        "invocation_id": None,
    }
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert entry.hash == hashlib.sha256(("0" * 64 + canonical).encode()).hexdigest()


def test_chain_links_each_entry_to_the_previous(store: Store) -> None:
    _append(store, 5)
    with store.session() as session:
        rows = session.scalars(select(AuditEntry).order_by(AuditEntry.seq)).all()
    assert [row.seq for row in rows] == [1, 2, 3, 4, 5]
    for before, after in zip(rows, rows[1:]):
        assert after.prev_hash == before.hash
    assert _verify(store) == VerifyResult(True, 5)


@pytest.fixture
def local_time_not_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # A naive time must be read as UTC, not as the host's local time.
    monkeypatch.setenv("TZ", "America/St_Johns")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_times_read_back_from_either_backend_give_the_same_hash(
    store: Store, local_time_not_utc: None
) -> None:
    _append(store, 3)
    with store.session() as session:
        row = session.scalars(select(AuditEntry).where(AuditEntry.seq == 2)).one()
    # SQLite drops the timezone; PostgreSQL may answer in the server's zone.
    if store.is_sqlite:
        assert row.at.tzinfo is None
    else:
        assert row.at.tzinfo is not None
    assert _verify(store).ok


def test_postgres_session_time_zone_does_not_change_hashes(pg_store: Store) -> None:
    store = pg_store
    _append(store, 3)
    with store.session() as session:
        session.execute(text("SET TIME ZONE 'Asia/Kolkata'"))
        row = session.scalars(select(AuditEntry).where(AuditEntry.seq == 1)).one()
        assert row.at.utcoffset() == timedelta(hours=5, minutes=30)
        assert verify(session).ok


def test_rolled_back_append_leaves_no_trace(store: Store) -> None:
    _append(store, 2)
    with pytest.raises(RuntimeError):
        with store.session() as session:
            append(session, user_id=None, actor="kernel", action="install", target="x", decision="allow")
            raise RuntimeError("the change being audited failed")
    _append(store, 1)
    assert _seqs(store) == [1, 2, 3]
    assert _verify(store).ok


def test_entry_dict_is_json_ready(store: Store) -> None:
    _append(store, 2)
    with store.session() as session:
        rows = session.scalars(select(AuditEntry).order_by(AuditEntry.seq)).all()
        out = [entry_dict(row) for row in rows]
    json.dumps(out)
    assert out[1]["seq"] == 2 and out[1]["decision"] == "deny"
    assert out[1]["prev_hash"] == out[0]["hash"]
    assert out[0]["at"].endswith("+00:00")
    assert set(out[0]) == {
        "seq", "at", "user_id", "actor", "action", "target", "scope",
        "decision", "detail", "invocation_id", "prev_hash", "hash",
    }


# --- tampering ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "first_bad", "reason"),
    [
        ("UPDATE audit_log SET actor = 'user:mallory' WHERE seq = 3", 3, "changed"),
        ("UPDATE audit_log SET decision = 'deny' WHERE seq = 3", 3, "changed"),
        ("UPDATE audit_log SET target = 'other' WHERE seq = 5", 5, "changed"),
        ("UPDATE audit_log SET user_id = NULL WHERE seq = 1", 1, "changed"),
        ("UPDATE audit_log SET scope = NULL WHERE seq = 2", 2, "changed"),
        ("UPDATE audit_log SET invocation_id = 'inv-x' WHERE seq = 4", 4, "changed"),
        ("UPDATE audit_log SET detail = '{\"i\": 2, \"why\": \"ok\"}' WHERE seq = 3", 3, "changed"),
        ("UPDATE audit_log SET hash = (CASE WHEN substr(hash, 1, 1) = 'f' THEN '0' ELSE 'f' END) || substr(hash, 2) WHERE seq = 4", 4, "changed"),
        ("UPDATE audit_log SET prev_hash = (CASE WHEN substr(prev_hash, 1, 1) = 'f' THEN '0' ELSE 'f' END) || substr(prev_hash, 2) WHERE seq = 2", 2, "link"),
        ("DELETE FROM audit_log WHERE seq = 3", 3, "missing"),
        ("DELETE FROM audit_log WHERE seq = 1", 1, "missing"),
    ],
)
def test_verify_finds_the_first_tampered_entry(
    store: Store, statement: str, first_bad: int, reason: str
) -> None:
    _append(store, 5)
    _sql(store, statement)
    result = _verify(store)
    assert not result.ok
    assert result.first_bad == first_bad
    assert result.reason is not None and reason in result.reason
    assert result.entries == len(_seqs(store))


def test_verify_finds_an_edited_time(store: Store) -> None:
    _append(store, 4)
    with store.session() as session:
        at = session.scalar(select(AuditEntry.at).where(AuditEntry.seq == 2))
    assert at is not None
    _sql(store, "UPDATE audit_log SET at = :at WHERE seq = 2", at=at + timedelta(microseconds=1))
    assert _verify(store).first_bad == 2


def test_verify_finds_swapped_rows(store: Store) -> None:
    _append(store, 5)
    _sql(
        store,
        "UPDATE audit_log SET seq = 1000 WHERE seq = 2",
        "UPDATE audit_log SET seq = 2 WHERE seq = 3",
        "UPDATE audit_log SET seq = 3 WHERE seq = 1000",
    )
    result = _verify(store)
    assert (result.ok, result.first_bad) == (False, 2)


def test_rehashing_one_edited_row_breaks_the_next_link(store: Store) -> None:
    _append(store, 5)
    with store.session() as session:
        row = session.scalars(select(AuditEntry).where(AuditEntry.seq == 3)).one()
        forged = compute_hash(
            row.prev_hash, seq=3, at=row.at, user_id=row.user_id, actor="user:mallory",
            action=row.action, target=row.target, scope=row.scope, decision=row.decision,
            detail=row.detail, invocation_id=row.invocation_id,
        )
    _sql(store, "UPDATE audit_log SET actor = 'user:mallory', hash = :h WHERE seq = 3", h=forged)
    result = _verify(store)
    assert (result.ok, result.first_bad) == (False, 4)
    assert result.reason is not None and "link" in result.reason


def test_verify_reads_the_database_not_the_session(store: Store) -> None:
    _append(store, 3)
    with store.session() as session:
        loaded = session.scalars(select(AuditEntry)).all()  # now in the identity map
        assert len(loaded) == 3
        _sql(store, "UPDATE audit_log SET target = 'forged' WHERE seq = 2")
        assert verify(session).first_bad == 2


def test_verify_streams_in_batches(store: Store) -> None:
    _append(store, 7)
    with store.session() as session:
        assert verify(session, batch=2) == VerifyResult(True, 7)
    _sql(store, "DELETE FROM audit_log WHERE seq = 6")
    with store.session() as session:
        assert verify(session, batch=2).first_bad == 6


# --- concurrency -------------------------------------------------------------------


def _run_threads(target: Any, count: int) -> None:
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            target(index)
        except BaseException as error:  # noqa: BLE001 - surfaced below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not [t for t in threads if t.is_alive()], "append threads hung"
    assert errors == []


def test_concurrent_appends_never_fork_the_chain(store: Store) -> None:
    def worker(index: int) -> None:
        for i in range(50):
            with store.session() as session:
                append(session, user_id=index, actor=f"agent:t{index}", action="agents.call",
                       target=f"n{i}", decision="allow")

    _run_threads(worker, 4)
    assert _seqs(store) == list(range(1, 201))
    assert _verify(store) == VerifyResult(True, 200)


def test_transactions_with_several_appends_do_not_deadlock(store: Store) -> None:
    # Each transaction appends, does other work, appends again: the second append
    # must not wait on a lock that a thread blocked behind the first one holds.
    def worker(index: int) -> None:
        for i in range(10):
            with store.session() as session:
                append(session, user_id=index, actor="user:me", action="install", target=f"a{i}",
                       decision="allow")
                session.execute(select(AuditEntry.seq).limit(1)).all()
                append(session, user_id=index, actor="user:me", action="grants.grant", target=f"a{i}",
                       decision="allow", scope="llm")

    _run_threads(worker, 4)
    assert _verify(store) == VerifyResult(True, 80)
    with store.session() as session:
        pairs = session.execute(select(AuditEntry.seq, AuditEntry.action).order_by(AuditEntry.seq)).all()
    # A transaction's two entries stay adjacent: no other writer got in between.
    for first, second in zip(pairs[::2], pairs[1::2]):
        assert (first.action, second.action) == ("install", "grants.grant")


_APPEND_SCRIPT = """
import sys
from dreamer.kernel.audit.log import append
from dreamer.kernel.store.db import Store
store = Store(sys.argv[1])
for i in range(40):
    with store.session() as session:
        append(session, user_id=None, actor="proc", action="x", target=sys.argv[2] + str(i), decision="allow")
print("done", flush=True)
"""


def test_appends_from_two_processes_keep_one_chain(store: Store) -> None:
    url = store.url.render_as_string(hide_password=False)
    procs = [
        subprocess.Popen([sys.executable, "-c", _APPEND_SCRIPT, url, name],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in ("a", "b")
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "done" in out
    assert _verify(store) == VerifyResult(True, 80)


# --- hostile or odd inputs ---------------------------------------------------------


def test_detail_is_normalized_to_what_reads_back(store: Store) -> None:
    with store.session() as session:
        append(session, user_id=1, actor="user:me", action="x", target="t", decision="allow",
               detail={1: ("a", 2.5), "nested": {"k": [True, None]}})
    with store.session() as session:
        row = session.scalars(select(AuditEntry)).one()
        assert row.detail == {"1": ["a", 2.5], "nested": {"k": [True, None]}}
    assert _verify(store).ok


def test_odd_text_is_stored_and_verifies(store: Store) -> None:
    with store.session() as session:
        entry = append(
            session, user_id=1, actor="user:\x00me", action="agents.call", target="t" * 500,
            decision="deny", scope="net:\ud800.example", detail={"msg": "nul\x00 and \udfff", "\x00k": 1},
            invocation_id="i" * 100,
        )
    assert len(entry.target) == 200 and entry.target.endswith("…")
    assert len(entry.invocation_id or "") == 40
    assert "\x00" not in entry.actor
    with store.session() as session:
        row = session.scalars(select(AuditEntry)).one()
        assert row.target == entry.target and row.actor == entry.actor and row.scope == entry.scope
    assert _verify(store).ok


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"decision": "maybe"}, "'allow' or 'deny'"),
        ({"detail": {"x": float("nan")}}, "NaN"),
        ({"detail": {"x": object()}}, "must be JSON"),
        ({"detail": ["not", "a", "dict"]}, "JSON object"),
    ],
)
def test_bad_entries_are_refused_in_one_sentence(store: Store, fields: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"user_id": 1, "actor": "a", "action": "b", "target": "c", "decision": "allow"}
    base.update(fields)
    with pytest.raises(ValueError, match=message):
        with store.session() as session:
            append(session, **base)
    assert _seqs(store) == []


def test_canonical_time_is_utc_with_microseconds() -> None:
    from dreamer.kernel.audit.log import canonical_time

    paris = timezone(timedelta(hours=2))
    assert canonical_time(datetime(2030, 5, 1, 12, 0, 0, 5, tzinfo=paris)) == "2030-05-01T10:00:00.000005+00:00"
    assert canonical_time(datetime(2030, 5, 1, 10, 0, 0, 5)) == "2030-05-01T10:00:00.000005+00:00"
