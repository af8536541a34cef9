"""How events and a day's briefing read: the structured form callers get, and the text a person reads.

No SDK here: plain functions over events, dates and timezones.
"""

from __future__ import annotations

from datetime import date, datetime, tzinfo
from typing import Any

from .events import Event


def day_name(day: date, today: date) -> str:
    """'Tomorrow, Thursday 12 March 2026'; the relative word only for yesterday, today and tomorrow."""
    written = f"{day:%A} {day.day} {day:%B} {day.year}"
    relative = {-1: "Yesterday", 0: "Today", 1: "Tomorrow"}.get((day - today).days)
    return f"{relative}, {written}" if relative else written


def _hm(moment: datetime) -> str:
    return f"{moment:%H:%M}"


Bounds = tuple[datetime, datetime]


def span(event: Event, tz: tzinfo, day: Bounds | None = None) -> str:
    """The event's time as it reads within `day`: '09:30–10:30', 'all day', 'from 22:00', 'until 02:00'.

    Without `day`, the whole event: '09:30–10:30', '22:00 to Sat 14 Mar 02:00'.
    """
    if event.all_day:
        assert event.start_date is not None and event.end_date is not None
        days = (event.end_date - event.start_date).days
        if day is None and days > 1:
            last = date.fromordinal(event.end_date.toordinal() - 1)
            return f"all day, {event.start_date:%a} {event.start_date.day} {event.start_date:%b} to {last:%a} {last.day} {last:%b}"
        return "all day"
    assert event.start_utc is not None and event.end_utc is not None
    start, end = event.start_utc.astimezone(tz), event.end_utc.astimezone(tz)
    if day is None:
        if start.date() == end.date():
            return f"{_hm(start)}–{_hm(end)}"
        return f"{_hm(start)} to {end:%a} {end.day} {end:%b} {_hm(end)}"
    starts_before, ends_after = event.start_utc < day[0], event.end_utc > day[1]
    if starts_before and ends_after:
        return "all day"
    if starts_before:
        return f"until {_hm(end)}"
    if ends_after:
        return f"from {_hm(start)}"
    return f"{_hm(start)}–{_hm(end)}"


def shown(event: Event, tz: tzinfo, day: Bounds | None = None) -> dict[str, Any]:
    """An event as callers see it: times in the user's timezone (ISO 8601), plus a readable span."""
    if event.all_day:
        assert event.start_date is not None and event.end_date is not None
        start, end = event.start_date.isoformat(), event.end_date.isoformat()
    else:
        assert event.start_utc is not None and event.end_utc is not None
        start = event.start_utc.astimezone(tz).isoformat(timespec="minutes")
        end = event.end_utc.astimezone(tz).isoformat(timespec="minutes")
    return {
        "id": event.id,
        "title": event.title,
        "start": start,
        "end": end,
        "all_day": event.all_day,
        "location": event.location,
        "time": span(event, tz, day),
    }


def event_line(event: dict[str, Any]) -> str:
    where = f" ({event['location']})" if event.get("location") else ""
    return f"• {event['time']} {event['title']}{where}"


def agenda_text(heading: str, events: list[dict[str, Any]]) -> str:
    if not events:
        return f"{heading}: nothing on the calendar."
    count = f"{len(events)} event{'s' if len(events) != 1 else ''}"
    return "\n".join([f"{heading}: {count}.", *(event_line(e) for e in events)])


def briefing_text(
    heading: str,
    events: list[dict[str, Any]],
    notes: list[dict[str, Any]] | None,
    grocery: list[str] | None,
    unavailable: dict[str, str],
) -> str:
    """The briefing as a person reads it; a part that could not be had says so in brackets."""
    lines = [agenda_text(heading, events)]
    if notes:
        lines.append("Related notes:")
        for note in notes:
            about = ", ".join(note["events"])
            text = note.get("snippet") or note.get("title") or ""
            lines.append(f"• {about}: {text}" if about else f"• {text}")
    elif notes is not None and events:
        lines.append("No related notes.")
    if grocery:
        lines.append(f"Grocery list, {len(grocery)} open item{'s' if len(grocery) != 1 else ''}: {', '.join(grocery)}.")
    elif grocery is not None:
        lines.append("The grocery list is empty.")
    for part, why in unavailable.items():
        lines.append(f"({part} not available: {why})")
    return "\n".join(lines)
