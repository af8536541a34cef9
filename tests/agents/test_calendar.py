"""The calendar agent in the SDK worker; its briefing reaches real notes and grocery workers through a stand-in kernel.

Day and time words are checked on their own against a fixed `now`, so no test
depends on when it runs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from agent_worker import Worker, WorkerFailed, kernel_call

from dreamer.agents.bundles import starter_bundles
from dreamer.agents.calendar.calendar_agent import when
from dreamer.agents.calendar.calendar_agent.server import keywords

BUNDLES = {b.name: b for b in starter_bundles()}
PARIS_TZ = ZoneInfo("Europe/Paris")
PARIS = {"id": 1, "name": "me", "timezone": "Europe/Paris"}
NOW = datetime(2026, 3, 11, 10, 15, tzinfo=PARIS_TZ)  # a Wednesday morning in Paris
FULL = {"agent:notes.search", "agent:grocery.list_items"}


@pytest.fixture
def calendar(start_worker: Callable[..., Worker]) -> Worker:
    return start_worker(BUNDLES["calendar"], "calendar_agent.server", "calendar")


@pytest.fixture
def notes(start_worker: Callable[..., Worker]) -> Worker:
    return start_worker(BUNDLES["notes"], "notes.server", "notes")


@pytest.fixture
def grocery(start_worker: Callable[..., Worker]) -> Worker:
    return start_worker(BUNDLES["grocery"], "grocery.server", "grocery")


def wire(calendar: Worker, installed: dict[str, Worker], granted: set[str]) -> list[dict]:
    """Let calendar call other agents through the stand-in kernel; return the calls it made.

    An agent missing from `installed` is answered as the kernel answers for an
    agent the user does not have: not_found.
    """
    seen: list[dict] = []
    handler = kernel_call(installed, "calendar", granted)

    def serve(method: str, params: dict) -> object:
        seen.append(params)
        if params["agent"] not in installed and _granted(granted, params):
            raise WorkerFailed({"code": -32000, "message": f"no agent {params['agent']}", "data": {"kind": "not_found"}})
        return handler(method, params)

    calendar.syscalls["agents.call"] = serve
    return seen


def _granted(granted: set[str], params: dict) -> bool:
    return f"agent:{params['agent']}.{params['function']}" in granted or f"agent:{params['agent']}" in granted


def refused(worker: Worker, function: str, args: dict) -> str:
    with pytest.raises(WorkerFailed) as err:
        worker.invoke(function, args, user=PARIS)
    assert err.value.kind == "invalid_argument", err.value.error
    message = err.value.message
    assert message.strip() and "\n" not in message and "Traceback" not in message and "Error" not in message
    return message


def test_describe_matches_the_contract(calendar: Worker) -> None:
    specs = calendar.describe()
    assert set(specs) == {"add_event", "agenda", "briefing", "move_event", "next_event", "remove_event"}
    assert all(s["exported"] and not s["confirm"] and not s["background"] and s["description"] for s in specs.values())
    # Sidekick's "undo that": adding is undone by deleting the new event, deleting by adding it back.
    assert specs["add_event"]["undo"] == {"function": "remove_event", "args": {"event_id": "result.event.id"},
                                          "when": "result.added"}
    assert specs["remove_event"]["undo"]["function"] == "add_event"
    assert specs["agenda"]["reads"] is True and "undo" not in specs["agenda"]  # a read: "undo that" passes over it
    specs.pop("remove_event")
    add = specs["add_event"]["parameters"]
    assert add["required"] == ["title", "start"] and set(add["properties"]) == {"title", "start", "end", "location"}
    assert specs["agenda"]["parameters"]["properties"]["day"]["default"] == "today"
    assert specs["briefing"]["parameters"]["properties"]["day"]["default"] == "tomorrow"
    assert "add {title} to my calendar {start}" in specs["add_event"]["examples"]
    assert "what's on my calendar {day}" in specs["agenda"]["examples"]
    assert "get me ready for {day}" in specs["briefing"]["examples"]
    assert any("{end}" in e for e in specs["add_event"]["examples"])
    assert any("{location}" in e for e in specs["add_event"]["examples"])
    assert all(len(s["examples"]) >= 8 for s in specs.values())


# ---- day and time words, against a fixed now -------------------------------------------------


@pytest.mark.parametrize(
    ("said", "start", "all_day"),
    [
        ("tomorrow 3pm", datetime(2026, 3, 12, 15, 0), False),
        ("friday at 10", datetime(2026, 3, 13, 10, 0), False),
        ("Friday at 10am", datetime(2026, 3, 13, 10, 0), False),
        ("2026-12-03 09:30", datetime(2026, 12, 3, 9, 30), False),
        ("2026-12-03T09:30", datetime(2026, 12, 3, 9, 30), False),
        ("2026-12-03 9:30", datetime(2026, 12, 3, 9, 30), False),
        ("2026-12-03 at 2pm", datetime(2026, 12, 3, 14, 0), False),
        ("next monday 14:00", datetime(2026, 3, 16, 14, 0), False),
        ("next wednesday 9:00", datetime(2026, 3, 18, 9, 0), False),
        ("wednesday at 16:30", datetime(2026, 3, 11, 16, 30), False),
        ("3pm", datetime(2026, 3, 11, 15, 0), False),
        ("9am", datetime(2026, 3, 12, 9, 0), False),  # passed today, so tomorrow
        ("at 3", datetime(2026, 3, 11, 15, 0), False),  # a bare 3 is the afternoon
        ("tomorrow at 7", datetime(2026, 3, 12, 7, 0), False),
        ("tonight at 8", datetime(2026, 3, 11, 20, 0), False),
        ("this evening at 8:30", datetime(2026, 3, 11, 20, 30), False),
        ("tonight", datetime(2026, 3, 11, 19, 0), False),
        ("tomorrow morning", datetime(2026, 3, 12, 9, 0), False),
        ("saturday afternoon", datetime(2026, 3, 14, 14, 0), False),
        ("noon", datetime(2026, 3, 11, 12, 0), False),
        ("monday at noon", datetime(2026, 3, 16, 12, 0), False),
        ("5 p.m. tomorrow", datetime(2026, 3, 12, 17, 0), False),
        ("the day after tomorrow at 11am", datetime(2026, 3, 13, 11, 0), False),
        ("friday 10", datetime(2026, 3, 13, 10, 0), False),
        ("14h30", datetime(2026, 3, 11, 14, 30), False),
        ("in 2 hours", datetime(2026, 3, 11, 12, 15), False),
        ("in 30 minutes", datetime(2026, 3, 11, 10, 45), False),
        ("in a week at 10", datetime(2026, 3, 18, 10, 0), False),
        ("now", datetime(2026, 3, 11, 10, 15), False),
        ("2026-12-03T09:30:00Z", datetime(2026, 12, 3, 10, 30), False),  # an offset is converted to the user's clock
        ("friday", datetime(2026, 3, 13), True),
        ("wednesday", datetime(2026, 3, 11), True),
        ("2026-12-03", datetime(2026, 12, 3), True),
        ("december 3", datetime(2026, 12, 3), True),
        ("3rd of December", datetime(2026, 12, 3), True),
        ("dec 3 2027", datetime(2027, 12, 3), True),
        ("march 1", datetime(2027, 3, 1), True),  # passed this year: next year's
        ("february 29", datetime(2028, 2, 29), True),  # the next one there is
        ("in 3 days", datetime(2026, 3, 14), True),
        ("weekend", datetime(2026, 3, 14), True),
    ],
)
def test_parse_when(said: str, start: datetime, all_day: bool) -> None:
    got = when.parse_when(said, NOW)
    assert got.start == start.replace(tzinfo=PARIS_TZ) and got.all_day is all_day
    assert got.start.utcoffset() == start.replace(tzinfo=PARIS_TZ).utcoffset()


def test_a_time_skipped_by_daylight_saving_moves_forward() -> None:
    # Paris skips 02:00-03:00 on 29 March 2026.
    got = when.parse_when("2026-03-29 02:30", NOW)
    assert got.start.astimezone(timezone.utc) == datetime(2026, 3, 29, 1, 30, tzinfo=timezone.utc)
    assert got.start.hour == 3 and got.start.minute == 30
    start, end = when.day_bounds(date(2026, 3, 29), PARIS_TZ)
    # (Python subtracts wall clocks within one zone, so compare in UTC.)
    assert end.astimezone(timezone.utc) - start.astimezone(timezone.utc) == timedelta(hours=23)


@pytest.mark.parametrize(
    ("said", "words"),
    [
        ("someday", "I can't tell when"),
        ("12/03", "could be read two ways"),
        ("2026-02-30", "not a real date"),
        ("february 30", "not a real date"),
        ("13pm", "not a time of day"),
        ("at 25", "not a time of day"),
        ("10:75", "not a time of day"),
        ("friday at 10 and 11", "I can't tell when"),
        ("at 3pm or 4pm", "more than one time"),
        ("9999-01-01", "too far away"),
        ("in 9999 days", "too far away"),
        ("", "No time was given"),
        ("x" * 500, "too long"),
    ],
)
def test_parse_when_refuses_with_one_sentence(said: str, words: str) -> None:
    with pytest.raises(ValueError) as err:
        when.parse_when(said, NOW)
    message = str(err.value)
    assert words in message and message.endswith(".") and "\n" not in message and len(message) < 250


START = when.When(start=datetime(2026, 3, 12, 15, 0, tzinfo=PARIS_TZ), all_day=False)


@pytest.mark.parametrize(
    ("said", "end"),
    [
        ("5pm", datetime(2026, 3, 12, 17, 0)),
        ("17:30", datetime(2026, 3, 12, 17, 30)),
        ("90 minutes", datetime(2026, 3, 12, 16, 30)),
        ("1h30", datetime(2026, 3, 12, 16, 30)),
        ("for 2 hours", datetime(2026, 3, 12, 17, 0)),
        ("an hour and a half", datetime(2026, 3, 12, 16, 30)),
        ("half an hour", datetime(2026, 3, 12, 15, 30)),
        ("1 hour 15 minutes", datetime(2026, 3, 12, 16, 15)),
        ("friday 5pm", datetime(2026, 3, 13, 17, 0)),
        ("tomorrow", datetime(2026, 3, 13, 0, 0)),  # a day alone: the end of that day
        ("1am", datetime(2026, 3, 13, 1, 0)),  # past midnight
    ],
)
def test_parse_end(said: str, end: datetime) -> None:
    assert when.parse_end(said, START, NOW) == end.replace(tzinfo=PARIS_TZ)


@pytest.mark.parametrize(
    ("said", "words"),
    [
        ("2pm", "comes before the start"),
        ("yesterday 5pm", "must come after the start"),
        ("2026-06-01", "at most 31 days"),
        ("whenever", "I can't tell when"),
    ],
)
def test_parse_end_refuses(said: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        when.parse_end(said, START, NOW)


def test_an_all_day_event_ends_on_a_day() -> None:
    friday = when.parse_when("friday", NOW)
    assert when.parse_end("sunday", friday, NOW) == datetime(2026, 3, 16, tzinfo=PARIS_TZ)
    with pytest.raises(ValueError, match="all-day event ends on a day"):
        when.parse_end("5pm", friday, NOW)
    with pytest.raises(ValueError, match="all-day event ends on a day"):
        when.parse_end("2 hours", friday, NOW)


TODAY = date(2025, 3, 12)  # a Wednesday, as in the recipes agent's table


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("today", TODAY),
        ("  Tonight ", TODAY),
        ("this evening", TODAY),
        ("tomorrow", date(2025, 3, 13)),
        ("Tomorrow?", date(2025, 3, 13)),
        ("tomorrow morning", date(2025, 3, 13)),
        ("yesterday", date(2025, 3, 11)),
        ("friday", date(2025, 3, 14)),
        ("Fri", date(2025, 3, 14)),
        ("on friday", date(2025, 3, 14)),
        ("this friday", date(2025, 3, 14)),
        ("wednesday", TODAY),
        ("next wednesday", date(2025, 3, 19)),
        ("next friday", date(2025, 3, 14)),
        ("monday", date(2025, 3, 17)),
        ("2025-12-24", date(2025, 12, 24)),
        ("december 24", date(2025, 12, 24)),
        ("in 2 weeks", date(2025, 3, 26)),
    ],
)
def test_resolve_day(said: str, expected: date) -> None:
    assert when.resolve_day(said, TODAY) == expected


@pytest.mark.parametrize("said", ["someday", "friday week", "2025-02-30", "13/03/2025", "x" * 500])
def test_resolve_day_refuses_with_a_sentence(said: str) -> None:
    with pytest.raises(ValueError) as err:
        when.resolve_day(said, TODAY)
    message = str(err.value)
    assert message.endswith(".") and "\n" not in message and len(message) < 250


def test_zone_falls_back_to_utc_for_unknown_names() -> None:
    assert when.zone("Not/AZone")[1] == "UTC" and when.zone(None)[1] == "UTC"
    assert when.zone("../../etc/passwd")[1] == "UTC"
    assert when.zone("Asia/Tokyo")[1] == "Asia/Tokyo"


def test_keywords_skip_filler_and_generic_words() -> None:
    assert keywords(["Dentist appointment", "Lunch with Ann at Café Rouge", "Team meeting", "Ann's birthday"]) == [
        "dentist", "lunch", "ann", "café", "rouge", "team", "birthday",
    ]
    assert keywords(["1:1", "Call", "Q3 sync"]) == []


# ---- the agent in the worker ------------------------------------------------------------------


def test_add_event_reads_the_users_timezone_and_defaults_to_an_hour(calendar: Worker, tmp_path: Path) -> None:
    out = calendar.invoke(
        "add_event", {"title": " Dentist ", "start": "2037-12-03 09:30", "location": "Rue de Rivoli 4"}, user=PARIS
    )
    event = out["event"]
    assert out["added"] is True and out["already_there"] is False and out["timezone"] == "Europe/Paris"
    assert event["title"] == "Dentist" and event["location"] == "Rue de Rivoli 4"
    assert (event["start"], event["end"]) == ("2037-12-03T09:30+01:00", "2037-12-03T10:30+01:00")
    assert event["time"] == "09:30–10:30" and event["all_day"] is False
    assert out["summary"] == "Added: Dentist at Rue de Rivoli 4, Thursday 3 December 2037, 09:30–10:30."
    # Kept as UTC in the agent's own database.
    rows = sqlite3.connect(tmp_path / "data" / "calendar" / "agent.db").execute(
        "SELECT title, start_utc, end_utc, all_day FROM events"
    ).fetchall()
    assert rows == [("Dentist", "2037-12-03T08:30:00Z", "2037-12-03T09:30:00Z", 0)]
    assert any(log["message"] == "added an event" for log in calendar.logs)


def test_the_same_event_is_not_added_twice(calendar: Worker) -> None:
    first = calendar.invoke("add_event", {"title": "Dentist", "start": "2037-12-03 09:30"}, user=PARIS)
    again = calendar.invoke("add_event", {"title": "DENTIST", "start": "2037-12-03T08:30:00Z"}, user=PARIS)
    assert again["added"] is False and again["already_there"] is True
    assert again["event"]["id"] == first["event"]["id"] and again["summary"].startswith("Already on the calendar")
    other = calendar.invoke("add_event", {"title": "Dentist", "start": "2037-12-03 11:00"}, user=PARIS)
    assert other["added"] is True
    assert calendar.invoke("agenda", {"day": "2037-12-03"}, user=PARIS)["count"] == 2


def test_agenda_lists_the_day_all_day_first_then_by_time(calendar: Worker) -> None:
    add = lambda **args: calendar.invoke("add_event", args, user=PARIS)  # noqa: E731
    add(title="Lunch with Ann", start="2037-12-03 12:30", end="14:00")
    add(title="Standup", start="2037-12-03 09:00", end="15 minutes")
    add(title="Mum's birthday", start="2037-12-03")
    add(title="Night train", start="2037-12-03 22:00", end="2037-12-04 07:00")
    add(title="Conference", start="2037-12-02", end="2037-12-04")
    add(title="Not that day", start="2037-12-04 09:00")
    day = calendar.invoke("agenda", {"day": "2037-12-03"}, user=PARIS)
    assert (day["date"], day["weekday"], day["count"]) == ("2037-12-03", "Thursday", 5)
    assert [(e["time"], e["title"]) for e in day["events"]] == [
        ("all day", "Conference"),  # began the day before
        ("all day", "Mum's birthday"),
        ("09:00–09:15", "Standup"),
        ("12:30–14:00", "Lunch with Ann"),
        ("from 22:00", "Night train"),
    ]
    assert day["summary"].splitlines()[0] == "Thursday 3 December 2037: 5 events."
    assert "• 12:30–14:00 Lunch with Ann" in day["summary"]
    next_day = calendar.invoke("agenda", {"day": "4 december 2037"}, user=PARIS)
    assert [(e["time"], e["title"]) for e in next_day["events"]] == [
        ("all day", "Conference"), ("until 07:00", "Night train"), ("09:00–10:00", "Not that day"),
    ]
    empty = calendar.invoke("agenda", {"day": "2037-12-25"}, user=PARIS)
    assert empty["events"] == [] and empty["summary"] == "Friday 25 December 2037: nothing on the calendar."


def test_timed_events_keep_their_moment_when_the_user_moves(calendar: Worker) -> None:
    calendar.invoke("add_event", {"title": "Call Tokyo", "start": "2037-12-03 09:30"}, user=PARIS)
    calendar.invoke("add_event", {"title": "Birthday", "start": "2037-12-03"}, user=PARIS)
    new_york = {"id": 1, "name": "me", "timezone": "America/New_York"}
    there = calendar.invoke("agenda", {"day": "2037-12-03"}, user=new_york)
    assert [(e["title"], e["time"], e["start"]) for e in there["events"]] == [
        ("Birthday", "all day", "2037-12-03"),  # a date stays on its day
        ("Call Tokyo", "03:30–04:30", "2037-12-03T03:30-05:00"),  # a meeting stays at its moment
    ]


def test_today_is_the_users_today(calendar: Worker) -> None:
    # Kiritimati and Pago Pago are 25 hours apart: on most days, two different dates.
    for tz in ("Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"):
        user = {"id": 1, "name": "me", "timezone": tz}
        before = datetime.now(ZoneInfo(tz)).date()
        got = calendar.invoke("agenda", {}, user=user)
        added = calendar.invoke("add_event", {"title": f"Tea in {tz}", "start": "tomorrow 4pm"}, user=user)
        after = datetime.now(ZoneInfo(tz)).date()
        assert got["timezone"] == tz and got["date"] in {before.isoformat(), after.isoformat()}
        tomorrow = {(before + timedelta(days=1)).isoformat(), (after + timedelta(days=1)).isoformat()}
        assert added["event"]["start"][:10] in tomorrow and added["event"]["start"][11:16] == "16:00", tz


BAD_EVENTS = [
        ({"title": "", "start": "friday"}, "needs a title"),
        ({"title": "   ", "start": "friday"}, "needs a title"),
        ({"title": "x" * 201, "start": "friday"}, "at most 200 characters"),
        ({"title": "bell\x07", "start": "friday"}, "control characters"),
        ({"title": "Dentist", "start": "someday soon"}, "I can't tell when 'someday soon' is"),
        ({"title": "Dentist", "start": "12/03 10am"}, "could be read two ways"),
        ({"title": "Dentist", "start": "2037-12-03 10:00", "end": "9am"}, "comes before the start"),
        ({"title": "Dentist", "start": "2037-12-03 10:00", "end": "2038-12-03"}, "at most 31 days"),
        ({"title": "Dentist", "start": "2037-12-03 10:00", "location": "y" * 201}, "at most 200 characters"),
]


def test_bad_events_are_refused_with_one_sentence_and_nothing_is_added(calendar: Worker) -> None:
    for args, words in BAD_EVENTS:
        assert words in refused(calendar, "add_event", args), args
    assert calendar.invoke("agenda", {"day": "2037-12-03"}, user=PARIS)["count"] == 0


def test_agenda_refuses_an_unknown_day(calendar: Worker) -> None:
    message = refused(calendar, "agenda", {"day": "someday soon"})
    assert "someday soon" in message and "tomorrow" in message
    assert "not a real date" in refused(calendar, "briefing", {"day": "2026-02-30"})


# ---- the briefing -------------------------------------------------------------------------------


def _busy_day(calendar: Worker, notes: Worker, grocery: Worker) -> None:
    calendar.invoke("add_event", {"title": "Dentist appointment", "start": "2037-12-03 09:30", "location": "Rue de Rivoli 4"}, user=PARIS)
    calendar.invoke("add_event", {"title": "Lunch with Ann", "start": "2037-12-03 12:30"}, user=PARIS)
    calendar.invoke("add_event", {"title": "Elsewhere", "start": "2037-12-04 12:30"}, user=PARIS)
    notes.invoke("save", {"text": "Ask the dentist about the bill"})
    notes.invoke("save", {"text": "Ann likes the Thai place on Rue Oberkampf"})
    notes.invoke("save", {"text": "Unrelated thought about bicycles"})
    grocery.invoke("add_items", {"items": ["milk", "eggs"]})


def test_briefing_gathers_events_related_notes_and_groceries(calendar: Worker, notes: Worker, grocery: Worker) -> None:
    _busy_day(calendar, notes, grocery)
    calls = wire(calendar, {"notes": notes, "grocery": grocery}, FULL)
    out = calendar.invoke("briefing", {"day": "2037-12-03"}, user=PARIS)
    assert [e["title"] for e in out["events"]] == ["Dentist appointment", "Lunch with Ann"]
    assert out["unavailable"] == {}
    related = {n["id"]: n for n in out["notes"]}
    assert set(related) == {1, 2}
    assert related[1]["events"] == ["Dentist appointment"] and related[1]["matched"] == ["dentist"]
    assert related[2]["events"] == ["Lunch with Ann"] and "**Ann**" in related[2]["snippet"]
    assert out["grocery"] == {"items": ["milk", "eggs"], "count": 2}
    # One search per keyword of the day's titles, then the grocery list; nothing else.
    assert [(c["agent"], c["function"], c["args"].get("query")) for c in calls] == [
        ("notes", "search", "dentist"), ("notes", "search", "lunch"), ("notes", "search", "ann"),
        ("grocery", "list_items", None),
    ]
    summary = out["summary"].splitlines()
    assert summary[0] == "Thursday 3 December 2037: 2 events."
    assert "• 09:30–10:30 Dentist appointment (Rue de Rivoli 4)" in summary
    assert "Related notes:" in summary and any(line.startswith("• Dentist appointment: ") for line in summary)
    assert summary[-1] == "Grocery list, 2 open items: milk, eggs."
    assert "not available" not in out["summary"]
    assert any(log["message"] == "briefing ready" for log in calendar.logs)


def test_briefing_says_what_it_could_not_reach_and_gives_the_rest(calendar: Worker, notes: Worker, grocery: Worker) -> None:
    # One set of workers, rewired for each case: starting three workers per case would be most of the run time.
    _busy_day(calendar, notes, grocery)
    day = {"day": "2037-12-03"}

    # Both grants switched off.
    calls = wire(calendar, {"notes": notes, "grocery": grocery}, granted=set())
    out = calendar.invoke("briefing", day, user=PARIS)
    assert out["unavailable"] == {"notes": "permission_denied", "grocery": "permission_denied"}
    assert [e["title"] for e in out["events"]] == ["Dentist appointment", "Lunch with Ann"]
    assert out["notes"] == [] and out["grocery"] == {"items": [], "count": 0}
    assert "(notes not available: permission_denied)" in out["summary"]
    assert "(grocery not available: permission_denied)" in out["summary"]
    assert "Grocery list" not in out["summary"] and "Related notes" not in out["summary"]
    # After the first refusal the briefing stops asking notes: the next keyword would meet the same answer.
    assert [(c["agent"], c["function"]) for c in calls] == [("notes", "search"), ("grocery", "list_items")]
    assert any(log["level"] == "warning" for log in calendar.logs)

    # Only the notes grant switched off.
    wire(calendar, {"notes": notes, "grocery": grocery}, {"agent:grocery.list_items"})
    out = calendar.invoke("briefing", day, user=PARIS)
    assert out["unavailable"] == {"notes": "permission_denied"}
    assert out["grocery"]["items"] == ["milk", "eggs"]
    assert out["summary"].splitlines()[-1] == "(notes not available: permission_denied)"

    # The grocery agent not installed: granted, but the kernel finds no such agent.
    wire(calendar, {"notes": notes}, FULL)
    out = calendar.invoke("briefing", day, user=PARIS)
    assert out["unavailable"] == {"grocery": "not_found"}
    assert {n["id"] for n in out["notes"]} == {1, 2}
    assert "(grocery not available: not_found)" in out["summary"]


def test_briefing_of_an_empty_day_asks_notes_nothing(calendar: Worker, notes: Worker, grocery: Worker) -> None:
    calls = wire(calendar, {"notes": notes, "grocery": grocery}, FULL)
    out = calendar.invoke("briefing", {"day": "2037-12-25"}, user=PARIS)
    assert out["events"] == [] and out["notes"] == [] and out["unavailable"] == {}
    assert [c["agent"] for c in calls] == ["grocery"]
    assert out["summary"] == "Friday 25 December 2037: nothing on the calendar.\nThe grocery list is empty."


def test_briefing_is_for_tomorrow_unless_told(calendar: Worker, notes: Worker, grocery: Worker) -> None:
    wire(calendar, {"notes": notes, "grocery": grocery}, FULL)
    tz = ZoneInfo("Europe/Paris")
    before = datetime.now(tz).date()
    calendar.invoke("add_event", {"title": "Dentist", "start": "tomorrow 9am"}, user=PARIS)
    out = calendar.invoke("briefing", {}, user=PARIS)
    after = datetime.now(tz).date()
    assert out["date"] in {(before + timedelta(days=1)).isoformat(), (after + timedelta(days=1)).isoformat()}
    if before == after:  # not across midnight while the test ran
        assert [e["title"] for e in out["events"]] == ["Dentist"]
        assert out["summary"].startswith("Tomorrow, ")
        assert datetime.fromisoformat(out["events"][0]["start"]).timetz().replace(tzinfo=None) == time(9, 0)


def test_remove_event_returns_what_add_event_needs_to_put_it_back(calendar: Worker) -> None:
    added = calendar.invoke("add_event", {"title": "Dentist", "start": "2026-12-03 09:30", "location": "Main St"}, user=PARIS)
    gone = calendar.invoke("remove_event", {"event_id": added["event"]["id"]}, user=PARIS)
    assert gone["deleted"] is True and gone["event"]["title"] == "Dentist"
    assert calendar.invoke("agenda", {"day": "2026-12-03"}, user=PARIS)["count"] == 0
    back = calendar.invoke("add_event", {"title": gone["event"]["title"], "start": gone["restore_start"],
                                         "end": gone["restore_end"], "location": gone["event"]["location"]}, user=PARIS)
    assert back["added"] is True and back["event"]["start"] == added["event"]["start"]
    assert back["event"]["end"] == added["event"]["end"] and back["event"]["location"] == "Main St"
    day = calendar.invoke("add_event", {"title": "Holiday", "start": "december 24"}, user=PARIS)
    undone = calendar.invoke("remove_event", {"event_id": day["event"]["id"]}, user=PARIS)
    again = calendar.invoke("add_event", {"title": "Holiday", "start": undone["restore_start"]}, user=PARIS)
    assert again["event"]["all_day"] is True and again["event"]["start"] == day["event"]["start"]
    with pytest.raises(WorkerFailed) as err:
        calendar.invoke("remove_event", {"event_id": 999}, user=PARIS)
    assert err.value.kind == "invalid_argument" and "no event 999" in err.value.message


def test_remove_event_by_words_of_its_title(calendar: Worker) -> None:
    """"cancel my meeting with Sam": the soonest upcoming events whose title has the words;
    one is deleted, several are a choice, none is a sentence saying so."""
    calendar.invoke("add_event", {"title": "Meeting with Sam and Ana", "start": "tomorrow at 10"}, user=PARIS)
    calendar.invoke("add_event", {"title": "Yoga", "start": "tomorrow at 18:00"}, user=PARIS)
    calendar.invoke("add_event", {"title": "Yoga", "start": "in 3 days at 18:00"}, user=PARIS)
    gone = calendar.invoke("remove_event", {"title": "sam"}, user=PARIS)
    assert gone["deleted"] is True and gone["event"]["title"] == "Meeting with Sam and Ana"
    choice = calendar.invoke("remove_event", {"title": "yoga"}, user=PARIS)["ask_user"]
    assert choice["question"] == "Which yoga should I delete?" and len(choice["options"]) == 2
    picked = calendar.invoke("remove_event", {"title": "yoga", **choice["options"][1]["args"]}, user=PARIS)
    assert picked["event"]["title"] == "Yoga" and picked["deleted"] is True
    assert calendar.invoke("remove_event", {"title": "yoga"}, user=PARIS)["deleted"] is True  # one left: no question
    for args, said in (({"title": "dentist"}, "No upcoming event on your calendar is called 'dentist'"),
                       ({}, "Say which event to delete")):
        with pytest.raises(WorkerFailed) as err:
            calendar.invoke("remove_event", args, user=PARIS)
        assert err.value.kind == "invalid_argument" and said in err.value.message


def test_next_event_overall_and_by_name(calendar: Worker) -> None:
    assert calendar.invoke("next_event", {}, user=PARIS)["summary"] == "Nothing is coming up on your calendar."
    calendar.invoke("add_event", {"title": "Dentist", "start": "in 3 days at 9:30"}, user=PARIS)
    calendar.invoke("add_event", {"title": "Standup", "start": "tomorrow at 9"}, user=PARIS)
    soonest = calendar.invoke("next_event", {}, user=PARIS)
    assert soonest["event"]["title"] == "Standup" and soonest["summary"].startswith("Next: Standup, Tomorrow, ")
    dentist = calendar.invoke("next_event", {"title": "dentist appointment"}, user=PARIS)
    assert dentist["event"]["title"] == "Dentist" and "09:30" in dentist["summary"]
    none = calendar.invoke("next_event", {"title": "haircut"}, user=PARIS)
    assert none["event"] is None and none["summary"] == "No upcoming event on your calendar is called 'haircut'."


def test_move_event_keeps_its_length_and_time_of_day_and_moves_back(calendar: Worker) -> None:
    added = calendar.invoke("add_event", {"title": "Dentist", "start": "tomorrow at 9:30", "end": "45 minutes"}, user=PARIS)
    # A day alone keeps the time of day; the length stays 45 minutes.
    moved = calendar.invoke("move_event", {"title": "dentist appointment", "start": "in 4 days"}, user=PARIS)
    assert moved["moved"] is True and moved["event"]["id"] == added["event"]["id"]
    start, end = (datetime.fromisoformat(moved["event"][k]) for k in ("start", "end"))
    assert start.timetz().replace(tzinfo=None) == time(9, 30) and (end - start).total_seconds() == 45 * 60
    assert (start.date() - datetime.fromisoformat(added["event"]["start"]).date()).days == 3
    assert moved["summary"].startswith("Moved Dentist to ")
    # A new time moves it there; undo (move_event with restore_start) puts it back.
    later = calendar.invoke("move_event", {"event_id": added["event"]["id"], "start": "in 5 days at 16:00"}, user=PARIS)
    assert datetime.fromisoformat(later["event"]["start"]).timetz().replace(tzinfo=None) == time(16, 0)
    back = calendar.invoke("move_event", {"event_id": added["event"]["id"], "start": later["restore_start"]}, user=PARIS)
    assert back["event"]["start"] == moved["event"]["start"] and back["event"]["end"] == moved["event"]["end"]
    with pytest.raises(WorkerFailed) as err:
        calendar.invoke("move_event", {"title": "haircut", "start": "friday"}, user=PARIS)
    assert "No upcoming event on your calendar is called 'haircut'" in err.value.message
