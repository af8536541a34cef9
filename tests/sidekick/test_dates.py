"""Days and times as people say them, computed from a fixed Wednesday (2025-03-12, 09:00 Berlin)."""

from __future__ import annotations

from datetime import date, datetime, time, timezone
from pathlib import Path

import pytest
from sidekick_support import NOW

from dreamer.sidekick.planner.language.dates import (
    Moment,
    day_value,
    moment_value,
    parse_day,
    parse_moment,
)

TODAY = NOW.date()


@pytest.mark.parametrize(
    ("said", "day"),
    [
        ("today", "2025-03-12"), ("tonight", "2025-03-12"), ("this evening", "2025-03-12"),
        ("tomorrow", "2025-03-13"), ("tomorrow morning", "2025-03-13"), ("day after tomorrow", "2025-03-14"),
        ("yesterday", "2025-03-11"),
        ("friday", "2025-03-14"), ("on friday", "2025-03-14"), ("this friday", "2025-03-14"), ("fri", "2025-03-14"),
        ("next friday", "2025-03-14"),  # the first Friday after today, as the recipes agent reads it
        ("wednesday", "2025-03-12"), ("next wednesday", "2025-03-19"),  # "next" skips today
        ("next monday", "2025-03-17"), ("sunday", "2025-03-16"), ("this weekend", "2025-03-15"),
        ("in 3 days", "2025-03-15"), ("in two weeks", "2025-03-26"), ("next week", "2025-03-19"),
        ("march 20", "2025-03-20"), ("20 march", "2025-03-20"), ("the 20th of march", "2025-03-20"),
        ("march 20th 2026", "2026-03-20"), ("the 28th", "2025-03-28"),
        ("the 5th", "2025-04-05"),  # already past this month: next month's
        ("january 3", "2026-01-03"),  # already past this year: next year's
        ("2025-12-24", "2025-12-24"),
    ],
)
def test_days(said: str, day: str) -> None:
    assert parse_day(said.split(), TODAY) == date.fromisoformat(day)


@pytest.mark.parametrize("said", ["friday dinner", "blue", "february 30", "2025-02-30", "the 45th", "in days", ""])
def test_not_days(said: str) -> None:
    assert parse_day(said.split(), TODAY) is None


def test_day_values_are_words_for_today_and_tomorrow_else_iso() -> None:
    assert day_value(TODAY, TODAY) == "today"
    assert day_value(date(2025, 3, 13), TODAY) == "tomorrow"
    assert day_value(date(2025, 3, 14), TODAY) == "2025-03-14"


@pytest.mark.parametrize(
    ("said", "day", "clock"),
    [
        ("tomorrow at 3pm", "2025-03-13", time(15)),
        ("at 3pm tomorrow", "2025-03-13", time(15)),
        ("friday 10am", "2025-03-14", time(10)),
        ("next tuesday at 4", "2025-03-18", time(16)),  # a bare 4 is the afternoon
        ("at 8 tonight", "2025-03-12", time(20)),
        ("at 9 in the morning", None, time(9)),
        ("saturday at noon", "2025-03-15", time(12)),
        ("monday 7:30pm", "2025-03-17", time(19, 30)),
        ("15:45", None, time(15, 45)),
        ("tomorrow morning", "2025-03-13", time(9)),
        ("march 20", "2025-03-20", None),
        # spoken together (side16s): "in" before a count, and the hour said with half or quarter
        ("in two days at 10am", "2025-03-14", time(10)),
        ("in 20 minutes", "2025-03-12", time(9, 20)),
        ("in an hour", "2025-03-12", time(10)),
        ("friday at half past seven", "2025-03-14", time(19, 30)),
        ("quarter to 3 tomorrow", "2025-03-13", time(14, 45)),
    ],
)
def test_moments(said: str, day: str | None, clock: time | None) -> None:
    assert parse_moment(said.split(), NOW) == Moment(date.fromisoformat(day) if day else None, clock)


@pytest.mark.parametrize("said", ["3 apples", "at lunch", "25:00", "tomorrow blue"])
def test_not_moments(said: str) -> None:
    assert parse_moment(said.split(), NOW) is None


def test_moment_values_carry_the_users_offset() -> None:
    assert moment_value(Moment(date(2025, 3, 13), time(15)), NOW) == "2025-03-13T15:00+01:00"
    # After the clocks change (2025-03-30 in Berlin) the offset is summer time.
    assert moment_value(Moment(date(2025, 4, 2), time(9)), NOW) == "2025-04-02T09:00+02:00"
    assert moment_value(Moment(date(2025, 3, 20), None), NOW) == "2025-03-20"  # a day alone
    # A time alone is the next time the clock shows it: 8:00 has passed at 9:00, so tomorrow.
    assert moment_value(Moment(None, time(8)), NOW) == "2025-03-13T08:00+01:00"
    assert moment_value(Moment(None, time(17)), NOW) == "2025-03-12T17:00+01:00"
    utc = datetime(2025, 3, 12, 9, 0, tzinfo=timezone.utc)
    assert moment_value(Moment(date(2025, 3, 13), time(15)), utc) == "2025-03-13T15:00+00:00"


def test_days_agree_with_the_recipes_agent() -> None:
    """The planner and the agent that receives the day must mean the same day by the same words."""
    days_py = Path(__file__).resolve().parents[2] / "agents" / "recipes" / "recipes" / "days.py"
    if not days_py.exists():
        pytest.skip("the recipes agent is not in this tree")
    from dreamer.agents.recipes.recipes.days import resolve_day

    for said in ["today", "tonight", "tomorrow", "friday", "this friday", "next friday", "wednesday",
                 "next wednesday", "sun", "next sunday"]:
        assert parse_day(said.split(), TODAY) == resolve_day(said, TODAY), said
