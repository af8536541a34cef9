"""What day and time a person means: "tomorrow 3pm", "friday at 10", "next monday 14:00", "2026-12-03 09:30".

Plain functions, no SDK: each takes `now` (or `today`) so the same words always
give the same answer in tests. Times are read in the user's timezone, which
`now` carries. A ValueError carries the one sentence the user should read.

Day words follow the recipes agent: "friday" and "this friday" are the coming
Friday, today included; "next friday" is the first Friday after today.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo

MAX_TEXT = 60
MAX_EVENT_DAYS = 31
MAX_AHEAD_DAYS = 10 * 365
# An end time earlier than the start is read as the next morning only within this many hours.
OVERNIGHT_HOURS = 12
MIN_YEAR, MAX_YEAR = 1900, 2200
HOW = "say something like 'tomorrow 3pm', 'friday at 10', 'next monday 14:00' or '2026-12-03 09:30'"
HOW_DAY = "say 'today', 'tomorrow', a weekday such as 'friday', or a date such as 2026-03-14 or 'march 14'"

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
    "today": 0,
    "tomorrow": 1,
    "tmrw": 1,
    "day after tomorrow": 2,
    "yesterday": -1,
}
MONTHS: dict[str, int] = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
    "december": 12, "dec": 12,
}
NUMBERS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}
# A part of the day said instead of a time: the time it stands for, and whether
# a bare hour said with it ("tonight at 8") is in the afternoon.
PERIODS: dict[str, tuple[time, bool]] = {
    "morning": (time(9, 0), False),
    "afternoon": (time(14, 0), True),
    "evening": (time(19, 0), True),
    "tonight": (time(19, 0), True),
    "night": (time(21, 0), True),
}
UNITS: dict[str, timedelta] = {
    "minute": timedelta(minutes=1), "min": timedelta(minutes=1), "m": timedelta(minutes=1),
    "hour": timedelta(hours=1), "hr": timedelta(hours=1), "h": timedelta(hours=1),
    "day": timedelta(days=1), "d": timedelta(days=1),
    "week": timedelta(weeks=1), "w": timedelta(weeks=1),
}

_AT = r"(?:(?:\bat|@)\s*)?"
_CLOCK = re.compile(_AT + r"(?<![\d:.-])(\d{1,2})[:.h](\d{2})(?:\s*(am|pm)\b)?(?![\d:])")
_AMPM = re.compile(_AT + r"(?<![\d:.-])(\d{1,2})\s*(am|pm)\b")
_BARE_AT = re.compile(r"(?:\bat|@)\s*(\d{1,2})(?![\d:.]|\s*(?:st|nd|rd|th)\b)")
_NAMED = re.compile(_AT + r"\b(noon|midday|midnight)\b")
_PERIOD = re.compile(r"\b(?:this |in the )?(morning|afternoon|evening|tonight|night)\b")
_IN = re.compile(r"\bin (\d{1,4}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve) ?(minutes?|mins?|hours?|hrs?|days?|weeks?)\b")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|half an?)\s*(minutes?|mins?|m|hours?|hrs?|h)\b")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?")


class NotUnderstood(ValueError):
    """The words name no day or time this parser knows."""


@dataclass(frozen=True)
class When:
    """A moment in the user's timezone; all_day when only a date was said."""

    start: datetime
    all_day: bool


@dataclass(frozen=True)
class _Parsed:
    day: date | None
    clock: time | None
    exact: datetime | None = None  # "in 2 hours", or an ISO time with its own offset


def zone(name: str | None) -> tuple[tzinfo, str]:
    """The user's timezone and its name; UTC when it is unset or unknown on this machine."""
    if name:
        try:
            from zoneinfo import ZoneInfo

            return ZoneInfo(name), name
        except (KeyError, ValueError, OSError, ImportError):  # ZoneInfoNotFoundError is a KeyError
            pass
    return timezone.utc, "UTC"


def at(day: date, clock: time, tz: tzinfo) -> datetime:
    """`day` at `clock` on the wall in `tz`; a time skipped by a DST change moves forward, as clocks do."""
    local = datetime.combine(day, clock, tzinfo=tz)
    return local.astimezone(timezone.utc).astimezone(tz)


def day_bounds(day: date, tz: tzinfo) -> tuple[datetime, datetime]:
    """The user's day as [start, end): 23 or 25 hours long on DST days."""
    return at(day, time(0), tz), at(day + timedelta(days=1), time(0), tz)


def _normalize(text: str) -> str:
    said = text.casefold()
    said = re.sub(r"\b([ap])\.m\b\.?", r"\1m", said)
    said = re.sub(r"o['’]clock", "", said)
    said = re.sub(r"[,;!?()]", " ", said)
    return " ".join(said.split()).strip(". ")


def _number(word: str) -> float:
    return float(NUMBERS.get(word, 0)) if not word[0].isdigit() else float(word)


def _hour(hour: int, minute: int, meridiem: str | None, afternoon: bool | None, bare: bool, said: str) -> time:
    """The clock time; `afternoon` is what a part of day said alongside implies (None: none was said)."""
    if meridiem:
        if not 1 <= hour <= 12:
            raise ValueError(f"{said!r} is not a time of day: with am or pm the hour goes from 1 to 12.")
        hour = hour % 12 + (12 if meridiem == "pm" else 0)
    elif afternoon and 1 <= hour <= 11:
        hour += 12  # "tonight at 8", "8:30 in the evening"
    elif bare and afternoon is None and 1 <= hour <= 6:
        hour += 12  # "at 3" is 15:00: people rarely book 3 am, and would say so
    if hour > 23 or minute > 59:
        raise ValueError(f"{said!r} is not a time of day.")
    return time(hour, minute)


def _take_time(said: str) -> tuple[str, time | None, time | None, bool | None]:
    """Remove the time from the words: (rest, clock time said, part-of-day time, afternoon hint)."""
    period: time | None = None
    afternoon: bool | None = None
    found = _PERIOD.search(said)
    if found:
        period, afternoon = PERIODS[found.group(1)]
        # "tonight" also names the day; other periods leave the day to the other words.
        said = (said[: found.start()] + (" today " if found.group(1) == "tonight" else " ") + said[found.end():]).strip()
    clocks: list[tuple[re.Match[str], time]] = []
    for pattern in (_CLOCK, _AMPM, _NAMED, _BARE_AT):
        for match in pattern.finditer(said):
            if any(match.start() < m.end() and m.start() < match.end() for m, _ in clocks):
                continue
            groups = match.groups()
            if pattern is _NAMED:
                clock = time(0) if groups[0] == "midnight" else time(12)
            elif pattern is _CLOCK:
                clock = _hour(int(groups[0]), int(groups[1]), groups[2], afternoon, False, match.group(0).strip())
            elif pattern is _AMPM:
                clock = _hour(int(groups[0]), 0, groups[1], afternoon, False, match.group(0).strip())
            else:
                clock = _hour(int(groups[0]), 0, None, afternoon, True, match.group(0).strip())
            clocks.append((match, clock))
    if len(clocks) > 1:
        raise ValueError("That names more than one time; give one, such as 'friday at 10'.")
    if not clocks:
        return said, None, period, afternoon
    match, clock = clocks[0]
    return (said[: match.start()] + " " + said[match.end():]).strip(), clock, period, afternoon


def _coming(weekday: int, today: date, after_today: bool) -> date:
    ahead = (weekday - today.weekday()) % 7
    if ahead == 0 and after_today:
        ahead = 7
    return today + timedelta(days=ahead)


def _real_date(year: int, month: int, day: int, said: str) -> date:
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise ValueError(f"{said!r} is too far away; give a year between {MIN_YEAR} and {MAX_YEAR}.")
    try:
        return date(year, month, day)
    except ValueError:
        raise ValueError(f"{said!r} is not a real date.") from None


def _month_day(words: list[str], today: date, said: str) -> date | None:
    """'december 3', '3rd of december', 'dec 3 2026', '3 dec 2026'; without a year, the next such day."""
    words = [w for w in words if w != "of"]
    if not 2 <= len(words) <= 3:
        return None
    year: int | None = None
    if len(words) == 3:
        if not re.fullmatch(r"\d{4}", words[2]):
            return None
        year = int(words[2])
        words = words[:2]
    first, second = words
    number = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?")
    if first in MONTHS and (m := number.fullmatch(second)):
        month, day = MONTHS[first], int(m.group(1))
    elif second in MONTHS and (m := number.fullmatch(first)):
        month, day = MONTHS[second], int(m.group(1))
    else:
        return None
    if year is not None:
        return _real_date(year, month, day, said)
    # This year's, or next year's once it has passed (for 29 February, the next leap year's).
    for year in range(today.year, today.year + 9):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate >= today:
            return candidate
    raise ValueError(f"{said!r} is not a real date.")


def _day_words(said: str, today: date, original: str) -> date | None:
    """The day the words name, None when they name none at all; NotUnderstood when unreadable."""
    if re.search(r"\d{1,2}/\d{1,2}", said):
        raise ValueError(
            f"{original!r} could be read two ways; write the date as 2026-12-03 or 'december 3' "
            "so day and month cannot be mixed up."
        )
    # "this friday" is "friday"; "next friday" is the first one after today.
    words = [w for w in said.split() if w not in ("on", "at", "@", "the", "for", "this")]
    if not words:
        return None
    joined = " ".join(words)
    if joined in RELATIVE:
        return today + timedelta(days=RELATIVE[joined])
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", joined):
        year, month, day = (int(part) for part in joined.split("-"))
        return _real_date(year, month, day, original)
    if m := re.fullmatch(r"in (\d{1,4}|" + "|".join(NUMBERS) + r") (days?|weeks?)", joined):
        days = int(_number(m.group(1))) * (7 if m.group(2).startswith("week") else 1)
        if days > MAX_AHEAD_DAYS:
            raise ValueError(f"{original!r} is too far away; give a date within {MAX_AHEAD_DAYS // 365} years.")
        return today + timedelta(days=days)
    after_today = words[0] == "next"
    if words[0] in ("next", "coming") and len(words) == 2:
        words = words[1:]
    if len(words) == 1 and words[0] in WEEKDAYS:
        return _coming(WEEKDAYS[words[0]], today, after_today)
    if len(words) == 1 and words[0] in ("weekend", "weekend's"):
        return today if today.weekday() == 6 else _coming(5, today, after_today)
    if len(words) >= 2:
        found = _month_day(words, today, original)
        if found is not None:
            return found
    raise NotUnderstood(original)


def resolve_day(text: str, today: date) -> date:
    """The day `text` names, relative to `today` (agenda and briefing)."""
    if not isinstance(text, str):
        raise ValueError(f"The day must be text; {HOW_DAY}.")
    said = _normalize(text)
    if len(said) > MAX_TEXT:
        raise ValueError(f"That day is too long to understand; {HOW_DAY}.")
    said = re.sub(r"\b(?:this |in the )?(?:morning|afternoon|evening|night)\b", " ", said).replace("tonight", "today")
    try:
        found = _day_words(" ".join(said.split()), today, text)
    except NotUnderstood:
        raise ValueError(f"I can't tell which day {text!r} is; {HOW_DAY}.") from None
    return today if found is None else found


def _parse(text: str, now: datetime) -> tuple[_Parsed, time | None]:
    """The day and the time the words name, and the time a part of day stands for ("morning")."""
    if not isinstance(text, str):
        raise ValueError(f"The time must be text; {HOW}.")
    stripped = " ".join(text.split())
    if not stripped:
        raise ValueError(f"No time was given; {HOW}.")
    if len(stripped) > MAX_TEXT:
        raise ValueError(f"That time is too long to understand; {HOW}.")
    tz = now.tzinfo or timezone.utc
    if _ISO.fullmatch(stripped):
        try:
            moment = datetime.fromisoformat(stripped)
        except ValueError:
            raise ValueError(f"{text!r} is not a real date and time.") from None
        if not MIN_YEAR <= moment.year <= MAX_YEAR:
            raise ValueError(f"{text!r} is too far away; give a year between {MIN_YEAR} and {MAX_YEAR}.")
        if len(stripped) == 10:
            return _Parsed(day=moment.date(), clock=None), None
        if moment.tzinfo is not None:
            return _Parsed(day=None, clock=None, exact=moment.astimezone(tz)), None
        return _Parsed(day=moment.date(), clock=moment.time().replace(second=0, microsecond=0)), None
    said = _normalize(stripped)
    if said == "now":
        return _Parsed(day=None, clock=None, exact=now.replace(second=0, microsecond=0)), None
    if m := _IN.fullmatch(said):
        unit = UNITS[m.group(2).removesuffix("s")]
        if unit < timedelta(days=1):
            later = now + unit * _number(m.group(1))
            return _Parsed(day=None, clock=None, exact=later.replace(second=0, microsecond=0)), None
    rest, clock, period, afternoon = _take_time(said)
    try:
        day = _day_words(rest, now.date(), text)
    except NotUnderstood:
        day = None
        # "friday 10": a bare hour after a day, said without "at".
        words = rest.split()
        if clock is None and len(words) >= 2 and re.fullmatch(r"\d{1,2}", words[-1]):
            try:
                day = _day_words(" ".join(words[:-1]), now.date(), text)
            except NotUnderstood:
                day = None
            if day is not None:
                clock = _hour(int(words[-1]), 0, None, afternoon, True, words[-1])
        if day is None:
            raise ValueError(f"I can't tell when {text!r} is; {HOW}.") from None
    if day is None and clock is None and period is None:
        raise ValueError(f"I can't tell when {text!r} is; {HOW}.")
    return _Parsed(day=day, clock=clock), period


def parse_when(text: str, now: datetime) -> When:
    """The moment `text` names, in `now`'s timezone.

    A date alone ("friday", "2026-12-03") is an all-day event. A time alone
    ("3pm") is today, or tomorrow once that time has passed today. A part of the
    day ("tomorrow morning") stands for 09:00, afternoon 14:00, evening and
    tonight 19:00, night 21:00.
    """
    parsed, period = _parse(text, now)
    tz = now.tzinfo or timezone.utc
    if parsed.exact is not None:
        return When(start=parsed.exact, all_day=False)
    clock = parsed.clock or period
    if clock is None:
        assert parsed.day is not None
        return When(start=at(parsed.day, time(0), tz), all_day=True)
    day = parsed.day
    if day is None:
        day = now.date()
        if at(day, clock, tz) < now.replace(second=0, microsecond=0):
            day += timedelta(days=1)
    return When(start=at(day, clock, tz), all_day=False)


def duration(text: str) -> timedelta | None:
    """'90 minutes', '1h30', 'an hour and a half', 'for 2 hours' -> the length; None when it is not a length."""
    said = _normalize(text)
    said = re.sub(r"^for\s+", "", said)
    said = said.replace("an hour and a half", "90 minutes").replace("and a half hours", ".5 hours")
    said = re.sub(r"(\d+)h(\d{2})\b", r"\1 hours \2 minutes", said)
    total = timedelta()
    position = 0
    for m in _DURATION_PART.finditer(said):
        gap = said[position : m.start()].strip()
        if gap not in ("", "and"):
            return None
        amount = 0.5 if m.group(1).startswith("half") else _number(m.group(1).split()[0])
        unit = m.group(2)
        total += (timedelta(hours=1) if unit.startswith("h") else timedelta(minutes=1)) * amount
        position = m.end()
    if position == 0 or said[position:].strip():
        return None
    return total


def parse_end(text: str, start: When, now: datetime) -> datetime:
    """When an event that begins at `start` ends.

    A length ("90 minutes", "2h") counts from the start; a time alone ("5pm")
    is on the start's day (the next day if that is not after the start); a full
    day and time is read as such; a date alone ends with that whole day.
    """
    if not isinstance(text, str):
        raise ValueError(f"The end must be text; {HOW}, or a length such as '90 minutes'.")
    length = duration(text) if len(text) <= MAX_TEXT else None
    if length is not None:
        if start.all_day:
            raise ValueError("An all-day event ends on a day, such as 'sunday'; to give it a length, give its start a time.")
        end = start.start + length
    else:
        parsed, period = _parse(text, now)
        tz = start.start.tzinfo or timezone.utc
        if start.all_day and (parsed.exact is not None or parsed.clock is not None or period is not None):
            raise ValueError("An all-day event ends on a day, such as 'sunday'; to end it at a time, give its start a time too.")
        if parsed.exact is not None:
            end = parsed.exact
        elif parsed.day is None:
            clock = parsed.clock or period
            assert clock is not None
            end = at(start.start.date(), clock, tz)
            if end <= start.start:
                # "11pm" to "1am" runs past midnight; "3pm" to "2pm" is a mistake, not a 23-hour event.
                end = at(start.start.date() + timedelta(days=1), clock, tz)
                if end - start.start > timedelta(hours=OVERNIGHT_HOURS):
                    raise ValueError(f"The end ({text!r}) comes before the start; give a later time or a length such as '1 hour'.")
        elif parsed.clock is None and period is None:
            end = at(parsed.day + timedelta(days=1), time(0), tz)
        else:
            end = at(parsed.day, parsed.clock or period or time(0), tz)
    if end <= start.start:
        raise ValueError(f"The end ({text!r}) must come after the start.")
    if end - start.start > timedelta(days=MAX_EVENT_DAYS):
        raise ValueError(f"An event can last at most {MAX_EVENT_DAYS} days; {text!r} is further away than that.")
    return end
