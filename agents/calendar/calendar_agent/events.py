"""The events table in the agent's own SQLite database.

Timed events are kept as UTC instants, so they stay at the same moment when the
user's timezone changes (a flight does not move because you landed). All-day
events are kept as dates, so a birthday stays on its day wherever the user is.
Plain functions over a connection; no SDK in this module.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import date, datetime, timezone

MAX_EVENTS = 20_000  # more than a lifetime of appointments: a runaway loop, not a person

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    location TEXT,
    all_day INTEGER NOT NULL DEFAULT 0,
    start_utc TEXT,              -- timed events: ISO 8601 UTC, sorts as text
    end_utc TEXT,
    start_date TEXT,             -- all-day events: the first day
    end_date TEXT,               -- all-day events: the day after the last one
    created_at TEXT NOT NULL,
    CHECK ((all_day = 0 AND start_utc IS NOT NULL AND end_utc IS NOT NULL)
        OR (all_day = 1 AND start_date IS NOT NULL AND end_date IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS events_by_start ON events(start_utc);
CREATE INDEX IF NOT EXISTS events_by_date ON events(start_date)
"""


@dataclass(frozen=True)
class Event:
    id: int
    title: str
    location: str | None
    all_day: bool
    start_utc: datetime | None
    end_utc: datetime | None
    start_date: date | None
    end_date: date | None  # exclusive


def utc_text(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def ensure_schema(db: sqlite3.Connection) -> None:
    # Statement by statement: executescript() would COMMIT the invocation's open transaction.
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)


def _event(row: sqlite3.Row) -> Event:
    def moment(text: str | None) -> datetime | None:
        return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None

    def day(text: str | None) -> date | None:
        return date.fromisoformat(text) if text else None

    return Event(
        id=row["id"], title=row["title"], location=row["location"], all_day=bool(row["all_day"]),
        start_utc=moment(row["start_utc"]), end_utc=moment(row["end_utc"]),
        start_date=day(row["start_date"]), end_date=day(row["end_date"]),
    )


def count(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT count(*) FROM events").fetchone()[0])


def same(db: sqlite3.Connection, title: str, start_utc: datetime | None, start_date: date | None) -> Event | None:
    """An event with this title (ignoring case) at this start: adding it again adds nothing."""
    if start_utc is not None:
        rows = db.execute("SELECT * FROM events WHERE all_day = 0 AND start_utc = ?", (utc_text(start_utc),))
    else:
        rows = db.execute("SELECT * FROM events WHERE all_day = 1 AND start_date = ?", (str(start_date),))
    return next((_event(r) for r in rows if r["title"].casefold() == title.casefold()), None)


def add_timed(db: sqlite3.Connection, title: str, location: str | None, start: datetime, end: datetime) -> int:
    cur = db.execute(
        "INSERT INTO events (title, location, all_day, start_utc, end_utc, created_at) VALUES (?, ?, 0, ?, ?, ?)",
        (title, location, utc_text(start), utc_text(end), utc_text(datetime.now(timezone.utc))),
    )
    return int(cur.lastrowid or 0)


def add_all_day(db: sqlite3.Connection, title: str, location: str | None, first: date, after_last: date) -> int:
    cur = db.execute(
        "INSERT INTO events (title, location, all_day, start_date, end_date, created_at) VALUES (?, ?, 1, ?, ?, ?)",
        (title, location, str(first), str(after_last), utc_text(datetime.now(timezone.utc))),
    )
    return int(cur.lastrowid or 0)


def get(db: sqlite3.Connection, event_id: int) -> Event | None:
    row = db.execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone()
    return _event(row) if row else None


def delete(db: sqlite3.Connection, event_id: int) -> None:
    db.execute("DELETE FROM events WHERE id = ?", (event_id,))


def on_day(db: sqlite3.Connection, day: date, day_start: datetime, day_end: datetime) -> list[Event]:
    """Events that touch the user's day: all-day ones first, then by start time."""
    rows = db.execute(
        """
        SELECT * FROM events
        WHERE (all_day = 1 AND start_date <= ? AND end_date > ?)
           OR (all_day = 0 AND start_utc < ? AND end_utc > ?)
        ORDER BY all_day DESC, coalesce(start_utc, start_date), id
        """,
        (str(day), str(day), utc_text(day_end), utc_text(day_start)),
    ).fetchall()
    return [_event(row) for row in rows]


def move(db: sqlite3.Connection, event_id: int, *, start_utc: datetime | None = None, end_utc: datetime | None = None,
         first: date | None = None, after_last: date | None = None) -> None:
    """Give the event new times: timed (start_utc, end_utc) or all-day (first, after_last)."""
    if start_utc is not None and end_utc is not None:
        db.execute("UPDATE events SET all_day = 0, start_utc = ?, end_utc = ?, start_date = NULL, end_date = NULL WHERE id = ?",
                   (utc_text(start_utc), utc_text(end_utc), event_id))
    else:
        db.execute("UPDATE events SET all_day = 1, start_date = ?, end_date = ?, start_utc = NULL, end_utc = NULL WHERE id = ?",
                   (str(first), str(after_last), event_id))


def upcoming(db: sqlite3.Connection, now: datetime, today: date, limit: int = 200) -> list[Event]:
    """Events not yet over, soonest first: timed ones ending after `now`, all-day ones from `today` on."""
    rows = db.execute(
        """
        SELECT * FROM events
        WHERE (all_day = 0 AND end_utc > ?) OR (all_day = 1 AND end_date > ?)
        ORDER BY coalesce(start_utc, start_date || 'T00:00:00Z'), id
        LIMIT ?
        """,
        (utc_text(now), str(today), limit),
    ).fetchall()
    return [_event(row) for row in rows]


def titled(found: list[Event], title: str) -> list[Event]:
    """Those of `found` whose title has every word of `title` (any case, any order):
    "my meeting with Sam" finds "Meeting with Sam and Ana"."""
    words = [w for w in _words(title) if w not in _FILLER]
    if not words:
        return []
    return [e for e in found if all(w in _words(e.title) for w in words)]


def _words(text: str) -> list[str]:
    return [w.strip(".,:;!?'\"()").lower() for w in text.split() if w.strip(".,:;!?'\"()")]


# Words a person says around an event's name that the name itself need not have.
_FILLER = frozenset("my the a an our this that event appointment meeting on at for".split())
