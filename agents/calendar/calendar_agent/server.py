"""The calendar: events in the agent's own database, a day's agenda, and a briefing for a day.

Days and times are read in the user's timezone ("tomorrow 3pm", "friday at 10",
"2026-12-03 09:30"). The briefing gathers the day's events, notes related to
them (through the notes agent) and the open grocery items (through the grocery
agent). Both calls need optional grants; when one is switched off or the other
agent is missing, the briefing says so and goes on with what it has.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime, timedelta
from typing import Any

from dreamer.sdk import CallError, Context, InvalidArgument, ask_user, function

from . import events, show
from .when import day_bounds, parse_end, parse_when, resolve_day, zone

MAX_TITLE = 200
MAX_LOCATION = 200
MAX_KEYWORDS = 8  # notes searches per briefing: enough for a busy day, bounded for a crowded one
NOTES_PER_KEYWORD = 3
MAX_RELATED_NOTES = 10
_STOPWORDS = frozenset(
    """
    a an and are at be by for from in into is it of on or our the their this to with my me we you your
    about after before over under up out off via per vs
    meeting meet call appointment appt event session sync chat catch catchup
    """.split()
)


class BadRequest(InvalidArgument, ValueError):
    """Input a function refuses: the caller gets kind invalid_argument and this one sentence."""


def _text(value: str | None, what: str, most: int, *, required: bool) -> str | None:
    if value is None:
        if required:
            raise BadRequest(f"The event needs a {what}.")
        return None
    if not isinstance(value, str):
        raise BadRequest(f"The {what} must be text.")
    value = " ".join(value.split())
    if not value:
        if required:
            raise BadRequest(f"The event needs a {what}, such as 'Dentist'.")
        return None
    if len(value) > most:
        raise BadRequest(f"The {what} can be at most {most} characters long; this one has {len(value)}.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest(f"The {what} contains characters that are not valid text.") from None
    if any(unicodedata.category(ch) == "Cc" for ch in value):
        raise BadRequest(f"The {what} contains control characters; use plain text.")
    return value


def _now(ctx: Context) -> tuple[datetime, str]:
    tz, tz_name = zone(getattr(ctx.user, "timezone", None))
    return datetime.now(tz), tz_name


def _day(ctx: Context, day: str) -> tuple[date, datetime, str]:
    now, tz_name = _now(ctx)
    try:
        return resolve_day(day, now.date()), now, tz_name
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


@function(
    exported=True,
    undo="remove_event",
    undo_args={"event_id": "result.event.id"},
    undo_when="result.added",
    examples=[
        "add {title} to my calendar {start}",
        "add {title} (to|in|on) my calendar [on|for] {start}",
        "put {title} (on|in|into) my calendar [on|for] {start}",
        "remind me to {title} {start}",
        "remind me (about|of) {title} {start}",
        "set a reminder (to|for) {title} {start}",
        "don't [let me] forget (to|about) {title} {start}",
        "schedule {title} {start}",
        "schedule {title} for {start}",
        "block {start} for {title}",
        "add {title} {start} at {location}",
        "add {title} from {start} to {end}",
        "schedule {title} from {start} until {end}",
        "I have {title} {start}",
        "book {title} for {start}",
        "new event {title} {start}",
        "create an event {title} on {start} at {location}",
        # what the entry is, named before its title, as other assistants' users say it
        "(create|add|make|new) [a|an] (event|appointment|calendar entry|entry) [called|named|titled|for] {title} {start}",
    ],
)
def add_event(ctx: Context, title: str, start: str, end: str | None = None, location: str | None = None) -> dict:
    """Add an event to the user's calendar.

    start and end are read in the user's timezone: "tomorrow 3pm", "friday at
    10", "next monday 14:00", "december 3", "2026-12-03 09:30" or an ISO time.
    A day without a time makes an all-day event. end may be a time ("5pm"), a
    day and time, or a length ("90 minutes"); it defaults to one hour after the
    start (the end of the day for all-day events). Adding the same title at the
    same start again adds nothing.
    """
    name = _text(title, "title", MAX_TITLE, required=True)
    assert name is not None
    place = _text(location, "location", MAX_LOCATION, required=False)
    now, tz_name = _now(ctx)
    try:
        when = parse_when(start, now)
        finish = parse_end(end, when, now) if end is not None and end.strip() else None
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    tz = now.tzinfo
    assert tz is not None
    db = ctx.db
    events.ensure_schema(db)
    if when.all_day:
        first = when.start.date()
        after_last = finish.date() if finish is not None else first + timedelta(days=1)
        existing = events.same(db, name, None, first)
    else:
        finish = finish or when.start + timedelta(hours=1)
        existing = events.same(db, name, when.start, None)
    if existing is not None:
        event = existing
    else:
        if events.count(db) >= events.MAX_EVENTS:
            raise BadRequest(f"The calendar holds its limit of {events.MAX_EVENTS:,} events; nothing more can be added.")
        if when.all_day:
            event_id = events.add_all_day(db, name, place, first, after_last)
        else:
            assert finish is not None
            event_id = events.add_timed(db, name, place, when.start, finish)
        found = events.get(db, event_id)
        assert found is not None  # inserted in this transaction
        event = found
    shown = show.shown(event, tz)
    day = event.start_date or (event.start_utc.astimezone(tz).date() if event.start_utc else now.date())
    where = f" at {event.location}" if event.location else ""
    verb = "Already on the calendar" if existing is not None else "Added"
    ctx.log("added an event" if existing is None else "event already there", id=event.id, all_day=event.all_day)
    return {
        "event": shown,
        "added": existing is None,
        "already_there": existing is not None,
        "timezone": tz_name,
        "summary": f"{verb}: {event.title}{where}, {show.day_name(day, now.date())}, {shown['time']}.",
    }



@function(
    exported=True,
    undo="add_event",
    undo_args={"title": "result.event.title", "start": "result.restore_start", "end": "result.restore_end",
               "location": "result.event.location"},
    reply=["Deleted {event.title} ({event.time}) from your calendar."],
    examples=[
        "delete event {event_id}", "(delete|remove|cancel) [calendar] event [number] {event_id}",
        "(cancel|delete|remove) (my|the) {title} (appointment|meeting|event|call|reservation|booking)",
        "(cancel|delete|remove) my (appointment|meeting|event|call) (with|about|for|at) {title}",
        "(cancel|delete|remove) [the] {title} (from|in|on) my calendar", "take {title} off my calendar",
        "(cancel|call off) [my|the] {title}", "(delete|remove) the {title} (event|appointment)",
        "(remove|clear|take) [the] {title} (from|off) my (calendar|schedule|diary)",
        # other Englishes' words for taking it off: "knock the book club off my calendar"
        "knock [my|the] {title} off my (calendar|schedule|diary)",
        "[my|the] {title} (got|has been|was) (called off|cancelled|canceled)",
    ],
)
def remove_event(ctx: Context, event_id: int | None = None, title: str | None = None) -> dict:
    """Delete one event from the user's calendar, by its id or by words of its title (the
    soonest upcoming events that have them; several: the user picks). Returns the event,
    so it can be added again."""
    now, tz_name = _now(ctx)
    tz = now.tzinfo
    assert tz is not None
    found = _find(ctx, now, event_id, title, "delete")
    if isinstance(found, dict):
        return found
    event = found
    event_id = event.id
    shown = show.shown(event, tz)
    restore_start, restore_end = _restore(event, tz)  # what add_event reads back to recreate it (undo)
    events.delete(ctx.db, event_id)
    ctx.log("deleted an event", id=event_id)
    return {"event": shown, "deleted": True, "timezone": tz_name,
            "restore_start": restore_start, "restore_end": restore_end}

def _find(ctx: Context, now: datetime, event_id: int | None, title: str | None, doing: str) -> events.Event | dict[str, Any]:
    """The event an id or words of its title name; a question (ask_user) when several upcoming ones have the words."""
    if event_id is None and not (title and title.strip()):
        raise BadRequest(f"Say which event to {doing}: its name, such as \"dentist\", or its id from your agenda.")
    if event_id is not None and (isinstance(event_id, bool) or not isinstance(event_id, int) or event_id < 1):
        raise BadRequest(f"Give the id of the event to {doing}, a whole number such as 3.")
    tz = now.tzinfo
    assert tz is not None
    events.ensure_schema(ctx.db)
    if event_id is None:
        wanted = _text(title, "title", 200, required=True) or ""
        matching = events.titled(events.upcoming(ctx.db, now, now.date()), wanted)
        if not matching:
            raise BadRequest(f"No upcoming event on your calendar is called {wanted!r}; say \"what's on my calendar\" to see them.")
        if len(matching) > 1:
            # (the day in each label: two events of one name differ by it, and "the March one" names it)
            options = [(f"{e.title}, {_day_of(e, tz)}, {show.shown(e, tz)['time']}", {"event_id": e.id})
                       for e in matching[:6]]
            return ask_user(f"Which {wanted} should I {doing}?", options)
        event_id = matching[0].id
    event = events.get(ctx.db, event_id)
    if event is None:
        raise BadRequest(f"There is no event {event_id}; your agenda for the day lists events with their ids.")
    return event


def _day_of(event: events.Event, tz: Any) -> str:
    """The day an event starts, as a label reads it: "Tue 4 Mar 2031"."""
    start = event.start_date if event.all_day else (event.start_utc.astimezone(tz).date() if event.start_utc else None)
    return f"{start:%a} {start.day} {start:%b} {start.year}" if start is not None else "no day"


def _restore(event: events.Event, tz: Any) -> tuple[str, str | None]:
    """What add_event or move_event reads back to put the event where it was (undo)."""
    if event.all_day:
        assert event.start_date is not None and event.end_date is not None
        last = event.end_date - timedelta(days=1)
        return event.start_date.isoformat(), (last.isoformat() if last > event.start_date else None)
    shown = show.shown(event, tz)
    return shown["start"], shown["end"]


@function(
    exported=True,
    undo="move_event",
    undo_args={"event_id": "result.event.id", "start": "result.restore_start"},
    # No reply template: the summary names the day too ("Moved dentist to Friday 11 December 2026, 15:00–16:00."),
    # which a correction of the day needs.
    examples=[
        "move my {title} (appointment|meeting|event|call) to {start}",
        "move my (appointment|meeting|event|call) (with|about|for) {title} to {start}",
        "move {title} to {start}", "reschedule [my] {title} (to|for) {start}",
        "push [my] {title} to {start}", "shift [my] {title} to {start}",
        "postpone [my] {title} (to|until) {start}", "move {title} on my calendar to {start}",
        "(push|move|bring) [my|the] {title} (back|forward|up) (to|until) {start}",
        "bump [my] {title} to {start}",
        # Indian English brings a meeting forward: "prepone the standup to 9 am"
        "prepone [my|the] {title} to {start}", "rebook [my|the] {title} (for|to) {start}",
        "[my|the] {title} (needs|has) to (move|be moved) to {start}",
    ],
)
def move_event(ctx: Context, start: str, title: str | None = None, event_id: int | None = None) -> dict:
    """Move one event to a new time, keeping its length; a day without a time keeps its time of day."""
    now, tz_name = _now(ctx)
    tz = now.tzinfo
    assert tz is not None
    found = _find(ctx, now, event_id, title, "move")
    if isinstance(found, dict):
        return found
    event = found
    try:
        when = parse_when(start, now)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    restore_start, _ = _restore(event, tz)
    if event.all_day:
        assert event.start_date is not None and event.end_date is not None
        if when.all_day:
            first = when.start.date()
            events.move(ctx.db, event.id, first=first, after_last=first + (event.end_date - event.start_date))
        else:
            events.move(ctx.db, event.id, start_utc=when.start, end_utc=when.start + timedelta(hours=1))
    else:
        assert event.start_utc is not None and event.end_utc is not None
        length = event.end_utc - event.start_utc
        begin = when.start
        if when.all_day:  # "move my dentist to tuesday": the same time on the new day
            local = event.start_utc.astimezone(tz)
            begin = datetime.combine(when.start.date(), local.timetz().replace(tzinfo=None), tzinfo=tz)
        events.move(ctx.db, event.id, start_utc=begin, end_utc=begin + length)
    moved = events.get(ctx.db, event.id)
    assert moved is not None
    shown = show.shown(moved, tz)
    day = moved.start_date or (moved.start_utc.astimezone(tz).date() if moved.start_utc else now.date())
    ctx.log("moved an event", id=event.id)
    return {"event": shown, "moved": True, "timezone": tz_name, "restore_start": restore_start,
            "summary": f"Moved {moved.title} to {show.day_name(day, now.date())}, {shown['time']}."}


@function(
    exported=True,
    reads=True,
    examples=[
        "what's my next (appointment|meeting|event)", "what is my next (appointment|meeting|event)",
        "(what's|what is) next on my calendar", "when is my next {title}", "when's my next {title}",
        "what's coming up [on my calendar]", "what do I have coming up", "what's the next thing on my calendar",
        "when is [the|my] {title}", "when do I have [the|my] {title}",
        "when (is|'s) my next {title} (booked|scheduled) [for]",
        "when have I got (the|my) {title}", "next {title} is when", "where do I (need|have) to be next",
    ],
)
def next_event(ctx: Context, title: str | None = None) -> dict:
    """The user's next event, or the next one whose title has these words ("when is my next dentist")."""
    now, tz_name = _now(ctx)
    tz = now.tzinfo
    assert tz is not None
    events.ensure_schema(ctx.db)
    coming = events.upcoming(ctx.db, now, now.date())
    wanted = (_text(title, "title", 200, required=False) or "").strip() if title else ""
    if wanted:
        coming = events.titled(coming, wanted)
    if not coming:
        summary = (f"No upcoming event on your calendar is called {wanted!r}." if wanted
                   else "Nothing is coming up on your calendar.")
        return {"event": None, "timezone": tz_name, "summary": summary}
    event = coming[0]
    first = event.start_date if event.all_day else event.start_utc.astimezone(tz).date()  # type: ignore[union-attr]
    assert first is not None
    shown = show.shown(event, tz)
    return {"event": shown, "timezone": tz_name,
            "summary": f"Next: {event.title}, {show.day_name(first, now.date())}, {shown['time']}."}


@function(
    exported=True,
    reads=True,
    examples=[
        "what's on my calendar {day}",
        "what do I have {day}",
        "what's on {day}",
        "show my agenda for {day}",
        "my schedule for {day}",
        "am I free {day}",
        "what am I doing {day}",
        "what's happening {day}",
        "what's on my calendar",
        "show my calendar",
        "what's my agenda",
        "am I busy {day}",
        "(any|are there any) (meetings|events|appointments) {day}",
        "what (meetings|events|appointments) do I have {day}",
        "do I have (anything|any meetings|any appointments|plans|any plans) {day}",
        "(anything|what's) (planned|scheduled) [for] {day}",
        "what have I got [on] {day}",
        "show my schedule for {day}",
        "what do I have on [the|my] calendar {day}",
        "[tell me] my (programme|program|plans|plan) [for] {day}", "{day}'s (schedule|agenda|programme|program)",
        "what do I have left {day}", "is (anything|there anything) [else] on my calendar {day}",
        # whether the day is taken, asked around it: "do I need to be anywhere tomorrow", "have I got much on friday"
        "do I (need|have) to be anywhere {day}", "have I got (much|anything) on {day}",
        "(is|was) there (anything|something) (on|happening|planned) {day}",
    ],
)
def agenda(ctx: Context, day: str = "today") -> dict:
    """The user's events for one day, all-day events first, then by time.

    The day is "today", "tomorrow", a weekday ("friday" is the coming one,
    today included; "next friday" the first after today), "december 3" or a
    date like 2026-12-03, in the user's timezone.
    """
    when, now, tz_name = _day(ctx, day)
    tz = now.tzinfo
    assert tz is not None
    bounds = day_bounds(when, tz)
    events.ensure_schema(ctx.db)
    found = [show.shown(e, tz, bounds) for e in events.on_day(ctx.db, when, *bounds)]
    found += _ical_events(ctx, bounds, tz)
    found.sort(key=lambda e: (not e["all_day"], e["start"]))
    heading = show.day_name(when, now.date())
    return {
        "date": when.isoformat(),
        "weekday": f"{when:%A}",
        "timezone": tz_name,
        "events": found,
        "count": len(found),
        "summary": show.agenda_text(heading, found),
    }


def _ical_events(ctx: Context, bounds: tuple[datetime, datetime], tz: Any) -> list[dict[str, Any]]:
    """The day's events in the user's iCalendar, through the calendar tool (`tool:calendar.list_events`,
    optional): events an MCP client or another agent put there show up in the agenda too.
    Without the grant or the tool, the agenda is the agent's own events, as before."""
    try:
        answer = ctx.tools.call("calendar.list_events", {"start": bounds[0].isoformat(), "end": bounds[1].isoformat()})
    except CallError as exc:
        ctx.log("the calendar tool is not available", level="debug", kind=exc.kind)
        return []
    shown = []
    for item in (answer or {}).get("events", []) if isinstance(answer, dict) else []:
        try:
            if item.get("all_day"):
                start_day = date.fromisoformat(item["start"][:10])
                end_day = date.fromisoformat(item["end"][:10]) if item.get("end") else start_day + timedelta(days=1)
                event = events.Event(0, item["title"], item.get("location"), True, None, None, start_day, end_day)
            else:
                start = datetime.fromisoformat(item["start"])
                end = datetime.fromisoformat(item["end"]) if item.get("end") else start + timedelta(hours=1)
                event = events.Event(0, item["title"], item.get("location"), False, start, end, None, None)
        except (KeyError, TypeError, ValueError):
            continue  # an event the tool describes oddly is left out, not fatal
        if not event.all_day and (event.end_utc <= bounds[0] or event.start_utc >= bounds[1]):  # type: ignore[operator]
            continue
        row = show.shown(event, tz, bounds)
        row["id"], row["source"] = item.get("uid"), "calendar tool"
        shown.append(row)
    return shown


def keywords(titles: list[str]) -> list[str]:
    """Words worth looking up in the notes: no filler, no generic 'meeting', each once, in order."""
    out: list[str] = []
    for title in titles:
        for word in re.findall(r"[^\W_]+(?:['’][^\W_]+)?", title.casefold()):
            word = re.sub(r"['’]s$", "", word)
            if len(word) >= 3 and word not in _STOPWORDS and not word.isdigit() and word not in out:
                out.append(word)
    return out


def _ask(ctx: Context, agent: str, function: str, **args: Any) -> tuple[Any, str | None]:
    """(answer, None) or (None, why): a missing grant or agent must not sink the briefing."""
    try:
        return ctx.call(agent, function, **args), None
    except CallError as exc:
        ctx.log(f"{agent}.{function} not available", level="warning", kind=exc.kind)
        return None, exc.kind


def _related_notes(ctx: Context, day_events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]] | None, str | None]:
    by_id: dict[Any, dict[str, Any]] = {}
    for word in keywords([e["title"] for e in day_events])[:MAX_KEYWORDS]:
        answer, problem = _ask(ctx, "notes", "search", query=word, limit=NOTES_PER_KEYWORD)
        if problem is not None:
            # The next keyword would meet the same refusal; stop asking.
            return None, problem
        if not isinstance(answer, dict) or not isinstance(answer.get("notes"), list):
            return None, "unexpected_answer"
        for note in answer["notes"]:
            if not isinstance(note, dict) or "id" not in note:
                continue
            related = by_id.setdefault(
                note["id"],
                {
                    "id": note["id"], "title": note.get("title"), "snippet": note.get("snippet"),
                    "url": note.get("url"), "matched": [], "events": [],
                },
            )
            related["matched"].append(word)
            for event in day_events:
                if word in keywords([event["title"]]) and event["title"] not in related["events"]:
                    related["events"].append(event["title"])
    ranked = sorted(by_id.values(), key=lambda n: -len(n["matched"]))  # stable: first found first among equals
    return ranked[:MAX_RELATED_NOTES], None


def _open_groceries(ctx: Context) -> tuple[list[str] | None, str | None]:
    answer, problem = _ask(ctx, "grocery", "list_items")
    if problem is not None:
        return None, problem
    items = answer.get("items") if isinstance(answer, dict) else None
    if not isinstance(items, list):
        return None, "unexpected_answer"
    return [str(item) for item in items], None


@function(
    exported=True,
    reads=True,
    examples=[
        "get me ready for {day}",
        "brief me for {day}",
        "give me a briefing for {day}",
        "prepare me for {day}",
        "what do I need to know for {day}",
        "what's my day like {day}",
        "get me ready",
        "morning briefing",
        "daily briefing",
        "brief me",
        # the day as a whole, in other assistants' words
        "what (does|will) my day look like [{day}]",
        "how does {day} look",
        "(tell me about|run through|walk me through|catch me up on) my day [{day}]",
        "(catch me up on|what's ahead) {day}",
        "(get|set) me (set|up) for {day}", "prep me for {day}",
    ],
)
def briefing(ctx: Context, day: str = "tomorrow") -> dict:
    """Get the user ready for a day: its events, notes related to them, and the open grocery items.

    Related notes come from the notes agent (a search for each word of the
    events' titles) and the grocery items from the grocery agent. When either
    cannot be reached (a grant switched off, the agent not installed), the
    briefing says so under "unavailable" and in its summary, and still gives
    the rest. "summary" is the whole briefing as text.
    """
    when, now, tz_name = _day(ctx, day)
    tz = now.tzinfo
    assert tz is not None
    bounds = day_bounds(when, tz)
    events.ensure_schema(ctx.db)
    day_events = [show.shown(e, tz, bounds) for e in events.on_day(ctx.db, when, *bounds)]
    unavailable: dict[str, str] = {}
    notes: list[dict[str, Any]] | None = []
    if day_events:
        notes, problem = _related_notes(ctx, day_events)
        if problem is not None:
            unavailable["notes"] = problem
    grocery, problem = _open_groceries(ctx)
    if problem is not None:
        unavailable["grocery"] = problem
    heading = show.day_name(when, now.date())
    ctx.log(
        "briefing ready", date=when.isoformat(), events=len(day_events), notes=len(notes or []),
        grocery=len(grocery or []), unavailable=sorted(unavailable),
    )
    return {
        "date": when.isoformat(),
        "weekday": f"{when:%A}",
        "timezone": tz_name,
        "events": day_events,
        "notes": notes or [],
        "grocery": {"items": grocery or [], "count": len(grocery or [])},
        "unavailable": unavailable,
        "summary": show.briefing_text(heading, day_events, notes, grocery, unavailable),
    }
