"""Days and times as people say them: "tomorrow", "next friday", "march 14th at 3pm".

Everything is computed from a `today` / `now` the caller passes in (the user's
local time), so the same words always mean the same day in tests. The parsers
take words already split and lower-cased, and succeed only when every word is
part of the expression: "friday" is a day, "friday dinner" is not.

"friday" / "this friday" is the coming one, today included; "next friday" is the
first one after today — the rule the recipes agent uses, so a day the planner
computes is the day that agent would compute from the same words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from dreamer.sidekick.planner.language.lexicon import ORDINALS, TENS, UNITS

WEEKDAYS: dict[str, int] = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
    "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5, "sunday": 6, "sun": 6,
}
MONTHS: dict[str, int] = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
    "december": 12, "dec": 12,
}
# Parts of the day and the hour a calendar entry gets when no time is said.
PARTS: dict[str, int | None] = {"morning": 9, "afternoon": 15, "evening": 19, "night": 20, "tonight": None}
GLUE: frozenset[str] = frozenset({"on", "for", "at", "by", "the", "of", "in"})
LEAD: frozenset[str] = frozenset({"on", "for", "at", "by", "the"})  # may open a day ("in" opens "in 3 days")
# Words a date parser should be given spelled right (the planner corrects typos towards them).
DATE_WORDS: frozenset[str] = frozenset(
    set(WEEKDAYS) | set(MONTHS) | set(PARTS)
    | {"today", "tomorrow", "yesterday", "tonight", "next", "this", "coming", "week", "weeks", "day",
       "days", "after", "weekend", "noon", "midday", "midnight", "oclock", "o'clock", "fortnight",
       "past", "half", "quarter", "hour", "hours", "minutes"}
)

# Words that on their own say "a day or a time" (not "may", "march", "sun": they are ordinary words too).
TEMPORAL: frozenset[str] = frozenset(
    {w for w in WEEKDAYS if len(w) > 3} | {m for m in MONTHS if len(m) > 3 and m not in ("march", "sept")}
    | {"today", "tomorrow", "tonight", "yesterday", "noon", "midnight", "o'clock", "oclock", "weekend"}
)

_TIME = re.compile(r"^(\d{1,2})(?::(\d{2}))?(a\.?m\.?|p\.?m\.?)?$")


@dataclass(frozen=True)
class Moment:
    """A day, a time of day, or both."""

    day: date | None
    clock: time | None


def day_value(day: date, today: date) -> str:
    """How a day is passed to a function: "today", "tomorrow", or an ISO date."""
    if day == today:
        return "today"
    if day == today + timedelta(days=1):
        return "tomorrow"
    return day.isoformat()


def moment_value(moment: Moment, now: datetime) -> str:
    """An ISO date-time in the user's zone ("2025-03-14T15:00+01:00"), or a date alone when no time was said."""
    tz: tzinfo | None = now.tzinfo
    day = moment.day
    if moment.clock is None:
        return (day or now.date()).isoformat()
    if day is None:
        # A time alone means the next time the clock shows it.
        day = now.date()
        if moment.clock <= now.timetz().replace(tzinfo=None):
            day += timedelta(days=1)
    return datetime.combine(day, moment.clock, tzinfo=tz).isoformat(timespec="minutes")


def parse_day(words: list[str], today: date) -> date | None:
    """The day all of `words` name, or None."""
    said = words
    words = _trim(words)
    if not words or (words == said and len(words) == 1 and words[0] in ORDINALS):
        return None  # a bare "first", nothing before it: no day (a fit took one word of "first time cooking")
    found = _day(words, 0, today)
    if found is None:
        return None
    day, end = found
    # "tomorrow morning" is still a day; the part of the day does not matter here.
    while end < len(words) and (words[end] in PARTS or words[end] in {"in", "the"}):
        end += 1
    return day if end == len(words) else None


def parse_moment(words: list[str], now: datetime) -> Moment | None:
    """A day and/or a time that all of `words` name ("tomorrow at 3pm", "9:30 on friday"), or None."""
    said = words
    words = _trim(words, lead=False)  # "at" stays: it makes "at 8" a time
    if not words or (words == said and len(words) == 1 and words[0] in ORDINALS):
        return None  # a bare "first", as parse_day reads it: "put it on the list first" names no day
    today = now.date()
    day: date | None = None
    clock: time | None = None
    explicit = False
    part: str | None = None
    # A number said with only a part of the day ("to 4 in the evening"): a time, as after "at". (A number
    # alone is not: "add 3 apples" could read "3" as the moment.)
    alone = len(words) > 1 and all(w in GLUE or w in PARTS for w in words[1:]) and any(w in PARTS for w in words[1:])
    i = 0
    while i < len(words):
        word = words[i]
        if word == "in" and day is None and clock is None:
            # "in 3 days" is a day, "in 2 hours" a moment from now: "in" is not glue before a count
            ahead = _ahead(words, i, now)
            if ahead is not None:
                when, i = ahead
                day, clock, explicit = when.date(), when.time().replace(second=0, microsecond=0), True
                continue
            found = _day(words, i, today)
            if found is not None:
                day, i = found
                continue
        if word in GLUE:
            i += 1
            continue
        if word in PARTS:
            part = part or word
            if word == "tonight" and day is None:
                day = today
            i += 1
            continue
        if day is None:
            found = _day(words, i, today)
            if found is not None:
                day, end = found
                part = part or next((w for w in words[i:end] if w in PARTS), None)
                i = end
                continue
        if clock is None:
            got = _clock(words, i, bare=alone and i == 0)
            if got is not None:
                clock, i, explicit = got
                continue
        return None
    if day is None and clock is None:
        return None
    if clock is None and part is not None and PARTS[part] is not None:
        clock = time(PARTS[part] or 0)
    elif clock is not None and not explicit and part not in (None, "morning") and clock.hour < 12:
        clock = clock.replace(hour=clock.hour + 12)  # "at 8 tonight"
    return Moment(day, clock)


def _trim(words: list[str], lead: bool = True) -> list[str]:
    """Without the small words around the expression ("on friday", "friday please")."""
    start, end = 0, len(words)
    while lead and start < end and words[start] in LEAD:
        start += 1
    while end > start and words[end - 1] in {"please", "the", "on", "at"}:
        end -= 1
    return words[start:end]


def _day(words: list[str], i: int, today: date) -> tuple[date, int] | None:
    """The longest day expression starting at words[i], and the index after it."""
    w = words[i]
    nxt = words[i + 1] if i + 1 < len(words) else ""
    third = words[i + 2] if i + 2 < len(words) else ""
    if w in ("today", "tonight", "now"):
        return today, i + 1
    if w == "this" and nxt in PARTS:
        return today, i + 2
    if w == "tomorrow":
        return today + timedelta(days=1), i + 1
    if w == "yesterday":
        return today - timedelta(days=1), i + 1
    if w == "day" and nxt == "after" and third == "tomorrow":
        return today + timedelta(days=2), i + 3
    if w in ("this", "coming", "next") and nxt in WEEKDAYS:
        ahead = (WEEKDAYS[nxt] - today.weekday()) % 7
        if w == "next" and ahead == 0:
            ahead = 7
        return today + timedelta(days=ahead), i + 2
    if w == "this" and nxt == "coming" and third in WEEKDAYS:
        return today + timedelta(days=(WEEKDAYS[third] - today.weekday()) % 7), i + 3
    if w in WEEKDAYS:
        return today + timedelta(days=(WEEKDAYS[w] - today.weekday()) % 7), i + 1
    if w in ("weekend",) or (w in ("this", "next") and nxt == "weekend"):
        saturday = today + timedelta(days=(5 - today.weekday()) % 7)
        if today.weekday() == 6:  # on a Sunday "this weekend" is today
            saturday = today
        if w == "next":
            return saturday + timedelta(days=7), i + 2
        return saturday, i + (2 if w == "this" else 1)
    if w == "next" and nxt == "week":
        return today + timedelta(days=7), i + 2
    if w == "in":
        count, j = _count(words, i + 1)
        if count is not None and j < len(words):
            unit = words[j]
            if unit in ("day", "days"):
                return today + timedelta(days=count), j + 1
            if unit in ("week", "weeks"):
                return today + timedelta(days=7 * count), j + 1
        if nxt == "fortnight" or (nxt == "a" and third == "fortnight"):
            return today + timedelta(days=14), i + (2 if nxt == "fortnight" else 3)
        return None
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", w):
        try:
            return date.fromisoformat(w), i + 1
        except ValueError:
            return None
    return _calendar_date(words, i, today)


def _calendar_date(words: list[str], i: int, today: date, after_the: bool = False) -> tuple[date, int] | None:
    """"march 14", "14 march", "14th of march", "the 14th", with an optional year."""
    w = words[i]
    nxt = words[i + 1] if i + 1 < len(words) else ""
    month = day = None
    j = i
    if w in MONTHS:
        day = _day_number(nxt)
        if day is not None:
            month, j = MONTHS[w], i + 2
    elif w == "the" and _day_number(nxt) is not None:
        return _calendar_date(words, i + 1, today, after_the=True)
    elif _day_number(w) is not None:
        day = _day_number(w)
        k = i + 1
        if k < len(words) and words[k] == "of":
            k += 1
        if k < len(words) and words[k] in MONTHS:
            month, j = MONTHS[words[k]], k + 1
        elif (w[-2:] in ("st", "nd", "rd", "th") and w[0].isdigit()) or (w in ORDINALS and (
                after_the or nxt in _AFTER_A_DAY)):
            # "the 14th", "on 14th", "the first": this month's, or next month's once it has passed. An
            # ordinal word before another word qualifies it ("first time cooking"): no day.
            month, j = today.month, i + 1
            try:
                candidate = date(today.year, month, day)
            except ValueError:
                return None
            if candidate < today:
                month = today.month % 12 + 1
    if month is None or day is None:
        return None
    year = today.year
    if j < len(words) and re.fullmatch(r"\d{4}", words[j]):
        year, j = int(words[j]), j + 1
        explicit_year = True
    else:
        explicit_year = False
    try:
        found = date(year, month, day)
    except ValueError:
        return None
    if not explicit_year and found < today - timedelta(days=1):
        try:
            found = date(year + 1, month, day)
        except ValueError:
            return None
    return found, j


# What may follow a day said as an ordinal word ("the third at 5", "on the second please").
_AFTER_A_DAY = frozenset({"", "at", "for", "please", "pls", "on", "in", "from", "to", "and", "then", "morning",
                          "afternoon", "evening", "night", "tonight", "?", ",", "."})


def _day_number(word: str) -> int | None:
    m = re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?", word)
    value = int(m.group(1)) if m else ORDINALS.get(word)
    return value if value is not None and 1 <= value <= 31 else None


def _ahead(words: list[str], i: int, now: datetime) -> tuple[datetime, int] | None:
    """A moment some minutes or hours from now, at words[i] == "in" ("in 20 minutes", "in an hour")."""
    count, j = _count(words, i + 1)
    if count is None and i + 1 < len(words) and words[i + 1] in ("an", "a"):
        count, j = 1, i + 2
    if count is None or j >= len(words) or count > 48 * 60:
        return None
    unit = words[j]
    if unit in ("minute", "minutes", "min", "mins"):
        return now + timedelta(minutes=count), j + 1
    if unit in ("hour", "hours", "hr", "hrs"):
        return now + timedelta(hours=count), j + 1
    return None


_SPAN_UNITS = frozenset({"day", "days", "week", "weeks", "minute", "minutes", "min", "mins", "hour", "hours", "hr",
                         "hrs"})


def spoken_spans(words: list[str]) -> list[tuple[int, int]]:
    """Stretches of words that name a time only together ("in two days", "in an hour", "half past
    seven"), none of whose words does alone: the matcher counts them as time words."""
    spans: list[tuple[int, int]] = []
    for i, w in enumerate(words):
        if w == "in":
            count, j = _count(words, i + 1)
            if count is None and i + 1 < len(words) and words[i + 1] in ("an", "a"):
                count, j = 1, i + 2
            if count is not None and j < len(words) and words[j] in _SPAN_UNITS:
                spans.append((i, j + 1))
        elif w in ("half", "quarter") and i + 2 < len(words) and words[i + 1] in ("past", "after", "to", "before"):
            if _count(words, i + 2)[0] is not None:
                spans.append((i, i + 3))
    return spans


def spoken_minutes(words: list[str], i: int) -> tuple[int, int] | None:
    """A length of time said in words at words[i], in minutes, and the index after it: "half an hour",
    "quarter of an hour", "an hour and a half", "2 hours", "45 minutes"."""
    def hour_at(j: int) -> int | None:
        while j < len(words) and words[j] in ("an", "a", "of"):
            j += 1
        return j + 1 if j < len(words) and words[j] in ("hour", "hr") else None

    if i < len(words) and words[i] in ("half", "quarter"):
        end = hour_at(i + 1)
        return (30 if words[i] == "half" else 15, end) if end is not None else None
    count, j = _count(words, i)
    if count is None and i < len(words) and words[i] in ("an", "a"):
        count, j = 1, i + 1
    if count is None or j >= len(words) or count > 48 * 60:
        return None
    if words[j] in ("minute", "minutes", "min", "mins"):
        return count, j + 1
    if words[j] not in ("hour", "hours", "hr", "hrs"):
        return None
    minutes, j = 60 * count, j + 1
    if words[j : j + 3] == ["and", "a", "half"]:
        minutes, j = minutes + 30, j + 3
    return minutes, j


def _count(words: list[str], i: int) -> tuple[int | None, int]:
    if i >= len(words):
        return None, i
    w = words[i]
    if w.isdigit():
        return int(w), i + 1
    if w in UNITS:
        return UNITS[w], i + 1
    if w in TENS:
        return TENS[w], i + 1
    return None, i


def _clock(words: list[str], i: int, bare: bool = False) -> tuple[time, int, bool] | None:
    """A time of day at words[i]: (time, index after it, whether am/pm was said); `bare`: a number alone
    is a time too."""
    w = words[i]
    if w in ("half", "quarter") and i + 2 < len(words) and words[i + 1] in ("past", "after", "to", "before"):
        # "half past seven", "quarter to 6": the hour as a bare one would be read after "at"
        hour_word = words[i + 2]
        hour = int(hour_word) if hour_word.isdigit() else UNITS.get(hour_word)
        if hour is None or not 1 <= hour <= 12 or hour_word in ("a", "an", "single", "couple", "dozen"):
            return None
        minute = 30 if w == "half" else 15
        if words[i + 1] in ("to", "before"):
            if w == "half":
                return None  # "half to" is nobody's time
            hour, minute = hour - 1 or 12, 45
        if 1 <= hour <= 7:
            hour += 12  # as "at 3": the afternoon
        return time(hour % 24, minute), i + 3, False
    if w in ("noon", "midday"):
        return time(12), i + 1, True
    if w == "midnight":
        return time(0), i + 1, True
    m = _TIME.match(w)
    hour: int | None = None
    minute = 0
    suffix = ""
    if m:
        hour, minute, suffix = int(m.group(1)), int(m.group(2) or 0), (m.group(3) or "").replace(".", "")
        if m.group(2) is None and not suffix and not bare and (i == 0 or words[i - 1] not in ("at", "@")):
            # A bare number is a time only after "at" or before "o'clock" ("3 apples" is not 3pm).
            if not (i + 1 < len(words) and words[i + 1] in ("oclock", "o'clock")):
                return None
    elif w in UNITS and w not in ("a", "an", "single", "couple", "dozen") and i > 0 and words[i - 1] in ("at", "@"):
        hour = UNITS[w]
    if hour is None or hour > 23 or minute > 59:
        return None
    j = i + 1
    if j < len(words) and words[j] in ("oclock", "o'clock"):
        j += 1
    if suffix == "pm" and hour < 12:
        hour += 12
    elif suffix == "am" and hour == 12:
        hour = 0
    elif not suffix and 1 <= hour <= 7 and m is not None and m.group(2) is None:
        # "at 3" means the afternoon: few people book things at 3 in the morning.
        hour += 12
    return time(hour, minute), j, bool(suffix) or hour >= 13


def says_my_day(text: str) -> bool:
    """"how's my day looking", "plan my day": a day the user calls theirs, with no other day named,
    is today (a function's default day may be another: the briefing's is tomorrow)."""
    words = re.findall(r"[a-z']+", text.casefold())
    return any(a == "my" and b == "day" for a, b in zip(words, words[1:], strict=False))
