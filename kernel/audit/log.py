"""The audit log: append-only and hash-chained.

Each entry's hash is sha256(prev_hash + canonical JSON of its fields), the first
entry's prev_hash is 64 zeros. Editing, deleting or reordering any row breaks the
chain at that row, which `verify()` reports. (Rewriting every later hash too is not
detectable without an outside anchor, and neither is dropping the newest rows.)

Appends are serialized so two writers never compute the same seq: a database lock
held until the appending transaction ends (PostgreSQL advisory lock, SQLite write
lock), then a process-wide lock around computing and inserting the row.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal

from sqlalchemy import Connection, func, insert, select, text
from sqlalchemy.orm import Session

from dreamer.kernel.store.db import PG_AUDIT_LOCK
from dreamer.kernel.store.hot import HotStatement
from dreamer.kernel.store.models import AuditEntry
from dreamer.kernel.store.tables import table, width
from dreamer.kernel.store.text import storable_text

GENESIS_HASH = "0" * 64
DECISIONS = ("allow", "deny")

# Column widths from the model; longer values are clipped (with a marker) rather
# than refused, because losing an audit record is worse than shortening one.
_AUDIT = table(AuditEntry)
_WIDTHS = {name: width(_AUDIT.c[name]) for name in ("actor", "action", "target", "scope", "invocation_id")}
_CLIP_MARK = "…"

_append_lock = threading.Lock()


@dataclass(frozen=True)
class VerifyResult:
    """`entries` counts the whole log; `first_bad` is the seq where the chain breaks
    (for a deleted row, the missing seq)."""

    ok: bool
    entries: int
    first_bad: int | None = None
    reason: str | None = None




def _clip(field: str, value: str) -> str:
    value = storable_text(value)
    width = _WIDTHS[field]
    if width is not None and len(value) > width:
        value = value[: width - len(_CLIP_MARK)] + _CLIP_MARK
    return value


def _clean_json(value: Any) -> Any:
    """The JSON value exactly as it will read back from the store, so the hash
    computed now equals the hash recomputed later (tuples become lists, keys strings)."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("Audit detail cannot hold NaN or infinity; JSON has no such numbers.")
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise ValueError(f"Audit detail keys must be strings, not {type(key).__name__}.")
            # json.dumps turns keys into strings the same way.
            name = key if isinstance(key, str) else json.dumps(key)
            out[storable_text(name)] = _clean_json(item)
        return out
    if isinstance(value, (list, tuple)):
        return [_clean_json(item) for item in value]
    raise ValueError(f"Audit detail must be JSON: {type(value).__name__} is not.")


def canonical_time(at: datetime) -> str:
    """ISO 8601 in UTC with microseconds. SQLite hands datetimes back without a
    timezone; they were written as UTC, so a naive value is read as UTC."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return at.astimezone(timezone.utc).isoformat(timespec="microseconds")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compute_hash(
    prev_hash: str,
    *,
    seq: int,
    at: datetime,
    user_id: int | None,
    actor: str,
    action: str,
    target: str,
    scope: str | None,
    decision: str,
    detail: Any,
    invocation_id: str | None,
) -> str:
    body = canonical_json(
        {
            "seq": seq,
            "at": canonical_time(at),
            "user_id": user_id,
            "actor": actor,
            "action": action,
            "target": target,
            "scope": scope,
            "decision": decision,
            "detail": detail,
            "invocation_id": invocation_id,
        }
    )
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


def _entry_hash(entry: Any, prev_hash: str) -> str:
    return compute_hash(
        prev_hash,
        seq=entry.seq,
        at=entry.at,
        user_id=entry.user_id,
        actor=entry.actor,
        action=entry.action,
        target=entry.target,
        scope=entry.scope,
        decision=entry.decision,
        detail=entry.detail,
        invocation_id=entry.invocation_id,
    )


def _lock_chain(conn: Connection) -> None:
    """Hold the chain's database lock until this transaction ends."""
    dialect = conn.dialect.name
    if dialect == "postgresql":
        conn.execute(_PG_LOCK, {"key": PG_AUDIT_LOCK})
    elif dialect == "sqlite":
        # A write that changes nothing still takes SQLite's write lock (or is a
        # no-op if this transaction holds it already); reads after it see the
        # newest committed chain, and other writers wait until we commit.
        conn.execute(_SQLITE_LOCK)


# Parameters bound at execution, not baked into the statement, so it compiles once.
_INSERT = HotStatement(insert(_AUDIT), (
    "seq", "at", "prev_hash", "hash", "user_id", "actor", "action", "target", "scope", "decision", "detail",
    "invocation_id",
))
_LAST = HotStatement(select(_AUDIT.c.seq, _AUDIT.c.hash).order_by(_AUDIT.c.seq.desc()).limit(1), ())
_SQLITE_LOCK = text("UPDATE audit_log SET seq = seq WHERE 0 = 1")
_PG_LOCK = text("SELECT pg_advisory_xact_lock(:key)")


def append(
    session: Session | Connection,
    *,
    user_id: int | None,
    actor: str,
    action: str,
    target: str,
    decision: Literal["allow", "deny"],
    scope: str | None = None,
    detail: dict[str, Any] | None = None,
    invocation_id: str | None = None,
) -> AuditEntry:
    """Add one entry to the chain within the caller's transaction (a Session's or a
    Connection's): it commits with the change it records, or not at all."""
    row = append_entry(
        session, user_id=user_id, actor=actor, action=action, target=target, decision=decision, scope=scope,
        detail=detail, invocation_id=invocation_id, write_locked=False,
    )
    return AuditEntry(**row)


def append_entry(
    session: Session | Connection,
    *,
    user_id: int | None,
    actor: str,
    action: str,
    target: str,
    decision: Literal["allow", "deny"],
    scope: str | None = None,
    detail: dict[str, Any] | None = None,
    invocation_id: str | None = None,
    write_locked: bool = False,
) -> dict[str, Any]:
    """`append` for the call path: the same entry, as its row, without building an ORM object
    nobody reads. `write_locked`: this transaction has already written on SQLite (it holds the
    database's write lock, so the chain cannot move under it); PostgreSQL's advisory lock is
    taken anyway."""
    if decision not in DECISIONS:
        raise ValueError(f"An audit decision is 'allow' or 'deny', not {decision!r}.")
    if detail is not None and not isinstance(detail, dict):
        raise ValueError("Audit detail must be a JSON object.")
    fields: dict[str, Any] = {
        "user_id": user_id,
        "actor": _clip("actor", actor),
        "action": _clip("action", action),
        "target": _clip("target", target),
        "scope": None if scope is None else _clip("scope", scope),
        "decision": decision,
        "detail": _clean_json(detail or {}),
        "invocation_id": None if invocation_id is None else _clip("invocation_id", invocation_id),
    }
    # Database lock first, then the thread lock: the thread lock is never held
    # while waiting on the database, so a transaction that appends twice cannot
    # deadlock against another thread waiting for its database lock.
    conn = session.connection() if isinstance(session, Session) else session
    if not (write_locked and conn.dialect.name == "sqlite"):
        _lock_chain(conn)
    with _append_lock:
        # On the cursor (kernel/store/hot.py): through Connection.execute this read cost more
        # than the insert that follows it.
        last = _LAST.first(conn)
        seq = 1 if last is None else int(last[0]) + 1
        prev_hash = GENESIS_HASH if last is None else str(last[1])
        # Microseconds survive both backends; nothing finer is stored.
        at = datetime.now(timezone.utc)
        digest = compute_hash(prev_hash, seq=seq, at=at, **fields)
        row = dict(seq=seq, at=at, prev_hash=prev_hash, hash=digest, **fields)
        # A Core insert: the ORM's unit of work costs more than the rest of the append.
        _INSERT.execute(conn, row)
    return row


def verify(session: Session, *, batch: int = 1000) -> VerifyResult:
    """Walk the chain in seq order and report the first entry that does not hold."""
    prev_hash = GENESIS_HASH
    expected = 1
    failure: tuple[int, str] | None = None
    # Plain rows, not ORM objects: the values come from the database even when
    # this session holds entries in memory, and nothing piles up in the identity map.
    rows = session.execute(
        select(*_AUDIT.c).order_by(AuditEntry.seq).execution_options(yield_per=batch)
    )
    try:
        for row in rows:
            if row.seq != expected:
                failure = (expected, f"entry {expected} is missing")
            elif row.prev_hash != prev_hash:
                failure = (row.seq, f"entry {row.seq} does not link to the entry before it")
            elif _entry_hash(row, prev_hash) != row.hash:
                failure = (row.seq, f"entry {row.seq} was changed after it was written")
            if failure is not None:
                break
            prev_hash = row.hash
            expected += 1
    finally:
        rows.close()
    if failure is None:
        return VerifyResult(True, expected - 1)
    total = session.scalar(select(func.count()).select_from(AuditEntry)) or 0
    return VerifyResult(False, total, failure[0], failure[1])


def entry_dict(entry: AuditEntry) -> dict[str, Any]:
    """One entry, JSON-ready for the API."""
    return {
        "seq": entry.seq,
        "at": canonical_time(entry.at),
        "user_id": entry.user_id,
        "actor": entry.actor,
        "action": entry.action,
        "target": entry.target,
        "scope": entry.scope,
        "decision": entry.decision,
        "detail": entry.detail,
        "invocation_id": entry.invocation_id,
        "prev_hash": entry.prev_hash,
        "hash": entry.hash,
    }
