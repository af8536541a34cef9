"""The calendar tool server: an MCP server over stdio, run in the user's sandbox.

Events live in /data/calendar.ics (iCalendar, RFC 5545), written whole to a temporary
file and renamed, so a crash never leaves half a calendar. Times are ISO 8601: a date
(2026-12-03) is an all-day event, a date and time with an offset is an instant, and one
without an offset is read as UTC.
"""

from __future__ import annotations

import os
import uuid
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import icalendar
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

FILE = Path(os.environ.get("DREAMER_DATA_DIR", "/data")) / "calendar.ics"
MAX_TEXT = 500
MAX_EVENTS = 5000

server = MCPServer("calendar", instructions="The user's calendar (iCalendar). Times are ISO 8601.")


def _when(text: str, what: str) -> date | datetime:
    if not isinstance(text, str) or not text.strip():
        raise ToolError(f"{what} must be an ISO 8601 date or date-time, such as 2026-12-03 or 2026-12-03T09:30:00+01:00")
    text = text.strip()
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ToolError(f"{what} {text[:40]!r} is not an ISO 8601 date or date-time") from None
    # Kept as UTC instants: iCalendar has no fixed offsets, only UTC or named zones.
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


def _text(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    value = " ".join(str(value).split())
    if len(value) > MAX_TEXT:
        raise ToolError(f"{what} may be at most {MAX_TEXT} characters")
    return value


def _load() -> icalendar.Calendar:
    if not FILE.exists():
        cal = icalendar.Calendar()
        cal.add("prodid", "-//dreamer//calendar tool//EN")
        cal.add("version", "2.0")
        return cal
    return icalendar.Calendar.from_ical(FILE.read_bytes())


def _save(cal: icalendar.Calendar) -> None:
    tmp = FILE.with_suffix(".tmp")
    tmp.write_bytes(cal.to_ical())
    os.replace(tmp, FILE)


def _iso(value: date | datetime) -> str:
    return value.isoformat()


def _view(event: icalendar.Event) -> dict[str, Any]:
    start = event.decoded("dtstart")
    end = event.decoded("dtend") if "dtend" in event else None
    return {
        "uid": str(event.get("uid")),
        "title": str(event.get("summary", "")),
        "start": _iso(start),
        "end": _iso(end) if end is not None else None,
        "all_day": not isinstance(start, datetime),
        "location": str(event.get("location")) if event.get("location") else None,
        "notes": str(event.get("description")) if event.get("description") else None,
    }


def _instant(value: date | datetime, end: bool = False) -> datetime:
    if isinstance(value, datetime):
        # A floating time (no zone) written by another program is read as UTC.
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    moment = datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    return moment + timedelta(days=1) if end else moment


def _find(cal: icalendar.Calendar, uid: str) -> icalendar.Event:
    for event in cal.walk("VEVENT"):
        if str(event.get("uid")) == uid:
            return event
    raise ToolError(f"there is no event with uid {uid[:80]!r}; list_events shows the uids")


def _set_times(event: icalendar.Event, start: date | datetime, end: date | datetime | None) -> None:
    if end is not None and _instant(end, True) < _instant(start):
        raise ToolError("end must not be before start")
    for key in ("dtstart", "dtend"):
        if key in event:
            del event[key]
    event.add("dtstart", start)
    if end is not None:
        event.add("dtend", end)


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def list_events(start: str | None = None, end: str | None = None) -> dict:
    """The events overlapping [start, end) (ISO 8601 dates or date-times), earliest first; all events when both are left out."""
    low = _instant(_when(start, "start")) if start else None
    high = _instant(_when(end, "end"), True) if end else None
    found = []
    for event in _load().walk("VEVENT"):
        begins = _instant(event.decoded("dtstart"))
        ends = _instant(event.decoded("dtend"), True) if "dtend" in event else begins
        if (high is None or begins < high) and (low is None or ends >= low):
            found.append((begins, _view(event)))
    found.sort(key=lambda pair: pair[0])
    return {"events": [view for _, view in found]}


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
def create_event(title: str, start: str, end: str | None = None, location: str | None = None, notes: str | None = None) -> dict:
    """Add an event; start and end are ISO 8601 (a date alone makes an all-day event)."""
    cal = _load()
    if len(cal.walk("VEVENT")) >= MAX_EVENTS:
        raise ToolError(f"the calendar holds {MAX_EVENTS} events, the most it may; delete some first")
    title = _text(title, "title")
    if not title:
        raise ToolError("the event needs a title")
    event = icalendar.Event()
    event.add("uid", f"{uuid.uuid4()}@dreamer")
    event.add("summary", title)
    event.add("dtstamp", datetime.now(timezone.utc))
    _set_times(event, _when(start, "start"), _when(end, "end") if end else None)
    for key, value in (("location", _text(location, "location")), ("description", _text(notes, "notes"))):
        if value:
            event.add(key, value)
    cal.add_component(event)
    _save(cal)
    return _view(event)


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False))
def update_event(uid: str, title: str | None = None, start: str | None = None, end: str | None = None,
                 location: str | None = None, notes: str | None = None) -> dict:
    """Change the given fields of the event with this uid; fields left out stay as they are."""
    cal = _load()
    event = _find(cal, uid)
    if title is not None:
        if not _text(title, "title"):
            raise ToolError("the title cannot be empty")
        event["summary"] = icalendar.vText(_text(title, "title"))
    if start is not None or end is not None:
        new_start = _when(start, "start") if start is not None else event.decoded("dtstart")
        new_end = _when(end, "end") if end is not None else (event.decoded("dtend") if "dtend" in event else None)
        _set_times(event, new_start, new_end)
    for key, value in (("location", location), ("description", notes)):
        if value is not None:
            if key in event:
                del event[key]
            if _text(value, key):
                event.add(key, _text(value, key))
    _save(cal)
    return _view(event)


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False))
def delete_event(uid: str) -> dict:
    """Delete the event with this uid."""
    cal = _load()
    event = _find(cal, uid)
    cal.subcomponents.remove(event)
    _save(cal)
    return {"deleted": uid}


if __name__ == "__main__":
    server.run()
