"""Which day the user means, and which recipe that day gets.

Plain functions with no SDK in them; a ValueError carries the sentence the user
should read.
"""

from __future__ import annotations

import hashlib
import re
from datetime import date, datetime, timedelta, timezone, tzinfo

from .catalog import RECIPES, Recipe

# A fixed shuffle of the catalog. Day N of the calendar gets entry N mod len, so
# consecutive days go through every recipe before one comes back.
ROTATION: tuple[Recipe, ...] = tuple(sorted(RECIPES, key=lambda r: hashlib.sha256(r.name.encode()).hexdigest()))

WEEKDAYS: dict[str, int] = {
    "monday": 0, "mon": 0,
    "tuesday": 1, "tue": 1, "tues": 1,
    "wednesday": 2, "wed": 2,
    "thursday": 3, "thu": 3, "thur": 3, "thurs": 3,
    "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5,
    "sunday": 6, "sun": 6,
}
RELATIVE: dict[str, int] = {
    "": 0,
    "today": 0,
    "tonight": 0,
    "tomorrow": 1,
    "tomorrow night": 1,
    "day after tomorrow": 2,
    "the day after tomorrow": 2,
    "yesterday": -1,
}
MAX_DAY_TEXT = 40
_HOW = "say 'today', 'tomorrow', a weekday such as 'friday', or a date such as 2025-03-14"


def zone(name: str | None) -> tuple[tzinfo, str]:
    """The user's timezone and its name; UTC when it is unset or unknown on this machine."""
    if name:
        try:
            from zoneinfo import ZoneInfo

            return ZoneInfo(name), name
        except (KeyError, ValueError, OSError, ImportError):  # ZoneInfoNotFoundError is a KeyError
            pass
    return timezone.utc, "UTC"


def today_in(tz: tzinfo) -> date:
    return datetime.now(tz).date()


def resolve_day(text: str, today: date) -> date:
    """The date meant by `text`, relative to `today`.

    "today"/"tonight", "tomorrow", "yesterday", a weekday or its abbreviation
    ("friday", "fri", "this friday" — the coming one, today included; "next
    friday" — the first one after today) or an ISO date (2025-03-14).
    """
    if not isinstance(text, str):
        raise ValueError(f"The day must be text; {_HOW}.")
    said = " ".join(text.casefold().replace(",", " ").split()).strip(".!? ")
    if len(said) > MAX_DAY_TEXT:
        raise ValueError(f"That day is too long to understand; {_HOW}.")
    if said in RELATIVE:
        return today + timedelta(days=RELATIVE[said])
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", said):
        try:
            return date.fromisoformat(said)
        except ValueError:
            raise ValueError(f"{text!r} is not a real date.") from None
    words = said.split()
    after_today = False
    if len(words) == 2 and words[0] in ("this", "on", "next", "coming"):
        after_today = words[0] == "next"
        words = words[1:]
    if len(words) == 1 and words[0] in WEEKDAYS:
        ahead = (WEEKDAYS[words[0]] - today.weekday()) % 7
        if ahead == 0 and after_today:
            ahead = 7
        return today + timedelta(days=ahead)
    raise ValueError(f"I can't tell which day {text!r} is; {_HOW}.")


def recipe_for(day: date) -> Recipe:
    return ROTATION[day.toordinal() % len(ROTATION)]
