"""Time ranges said in words as [start, end) dates.

A point is a day ("3 October", "October 3rd"), a month ("October", "Oct 2025"), a quarter
("Q3", "this quarter"), a year ("2023", "last year") or a relative span ("last month",
"this week", "yesterday"). A range is a point, or "between/from A and/to B" (A's start to
B's end), "since A" / "since the start of A" (A's start to today, inclusive), "year to
date" (1 January to today), or "the last N days/weeks/months". A month named without a
year is the latest one not after today.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
ABBREVIATIONS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
                 "oct": 10, "nov": 11, "dec": 12}
NOW = re.compile(r"\b(right now|currently|at the moment|at present|as of (?:now|today)|now|today)\b")
_MONTH = "(" + "|".join(MONTHS) + "|" + "|".join(ABBREVIATIONS) + ")"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_RELATIVE = re.compile(r"(last|previous|this|current|next) (month|week|year|quarter)")
MAX_POINT_WORDS = 5  # "the 3rd of october 2026"


@dataclass(frozen=True)
class Range:
    start: date
    end: date  # exclusive
    words: str  # what the user said, for the answer
    said: str  # the text that named it, to take out of the question

    @property
    def label(self) -> str:
        start, last = self.start, self.end - timedelta(days=1)
        if (start.month, start.day, self.end.month, self.end.day) == (1, 1, 1, 1) and self.end.year == start.year + 1:
            return f"in {start.year}"
        if start.day == 1 and self.end == _month(start.year, start.month)[1]:
            return f"in {start.strftime('%B %Y')}"
        if start.day == 1 and start.month % 3 == 1 and self.end == _add_months(start, 3):
            return f"in Q{(start.month - 1) // 3 + 1} {start.year}"
        if last == start:
            return f"on {_day(start)}"
        return f"from {_day(start)} to {_day(last)}"


def _day(d: date) -> str:
    return f"{d.day} {d.strftime('%B %Y')}"


def _month(year: int, month: int) -> tuple[date, date]:
    start = date(year, month, 1)
    return start, _add_months(start, 1)


def _add_months(first: date, months: int) -> date:
    index = first.year * 12 + first.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _month_number(word: str) -> int:
    return MONTHS.index(word) + 1 if word in MONTHS else ABBREVIATIONS[word]


def _latest_year(month: int, today: date) -> int:
    return today.year if month <= today.month else today.year - 1


def find_now(text: str) -> str | None:
    """The words that mean "as things are today" ("right now", "currently"), if said."""
    m = NOW.search(text.lower())
    return m.group(0) if m else None


def point(words: str, today: date) -> tuple[date, date] | None:
    """[start, end) of one point in time said as `words` (the whole of it), or None."""
    text = words.strip()
    if text.startswith("the ") and not text.startswith("the start") and not text.startswith("the beginning"):
        text = text[4:]
    m = _RELATIVE.fullmatch(text)
    if m:
        return _relative(m.group(1), m.group(2), today)
    if text == "yesterday":
        day = today - timedelta(days=1)
        return day, today
    if text == "today":
        return today, today + timedelta(days=1)
    m = re.fullmatch(rf"q([1-4])(?: {_YEAR})?", text)
    if m:
        q = int(m.group(1))
        year = int(m.group(2)) if m.group(2) else (today.year if 3 * q - 2 <= today.month else today.year - 1)
        first = date(year, 3 * q - 2, 1)
        return first, _add_months(first, 3)
    m = re.fullmatch(rf"{_DAY} (?:of )?{_MONTH}(?:,? {_YEAR})?", text) or None
    if m:
        return _on_day(int(m.group(1)), m.group(2), m.group(3), today)
    m = re.fullmatch(rf"{_MONTH} (?:the )?{_DAY}(?:,? {_YEAR})?", text)
    if m:
        return _on_day(int(m.group(2)), m.group(1), m.group(3), today)
    m = re.fullmatch(rf"{_MONTH}(?:,? (?:of )?{_YEAR})?", text)
    if m:
        month = _month_number(m.group(1))
        return _month(int(m.group(2)) if m.group(2) else _latest_year(month, today), month)
    m = re.fullmatch(_YEAR, text)
    if m:
        year = int(m.group(1))
        return date(year, 1, 1), date(year + 1, 1, 1)
    return None


def _on_day(day: int, month_word: str, year: str | None, today: date) -> tuple[date, date] | None:
    month = _month_number(month_word)
    try:
        start = date(int(year) if year else _latest_year(month, today), month, day)
    except ValueError:  # 31 February: not a day
        return None
    return start, start + timedelta(days=1)


def _relative(which: str, unit: str, today: date) -> tuple[date, date]:
    step = {"last": -1, "previous": -1, "next": 1}.get(which, 0)
    if unit == "week":
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7 * step)
        return monday, monday + timedelta(days=7)
    if unit == "month":
        first = _add_months(today.replace(day=1), step)
        return first, _add_months(first, 1)
    if unit == "quarter":
        first = _add_months(date(today.year, 3 * ((today.month - 1) // 3) + 1, 1), 3 * step)
        return first, _add_months(first, 3)
    year = today.year + step
    return date(year, 1, 1), date(year + 1, 1, 1)


def _longest_point(tokens: list[str], start: int, today: date, stop: int | None = None) -> tuple[int, tuple[date, date]] | None:
    """The longest run of tokens from `start` (before `stop`) that is a point: (end index, span)."""
    last = min(len(tokens), stop if stop is not None else len(tokens), start + MAX_POINT_WORDS)
    for end in range(last, start, -1):
        found = point(" ".join(tokens[start:end]), today)
        if found is not None:
            return end, found
    return None


def _made(start: date, end: date, tokens: list[str], i: int, j: int) -> Range:
    said = " ".join(tokens[i:j])
    return Range(start, end, said, said)


def find_range(text: str, today: date) -> Range | None:
    """The first time range `text` names, or None."""
    low = text.lower()
    tomorrow = today + timedelta(days=1)
    m = re.search(r"\b(?:year to date|so far this year|this year so far|ytd)\b", low)
    if m:
        return Range(date(today.year, 1, 1), tomorrow, m.group(0), m.group(0))
    tokens = low.split()
    for i, word in enumerate(tokens):
        if word in ("between", "from"):  # between A and B, from A to B
            for sep in range(i + 2, min(len(tokens), i + 2 + MAX_POINT_WORDS)):
                if tokens[sep] not in ("and", "to", "until", "till", "through", "-"):
                    continue
                first = _longest_point(tokens, i + 1, today, stop=sep)
                second = _longest_point(tokens, sep + 1, today)
                if first is not None and first[0] == sep and second is not None:
                    (a, b), (c, d) = first[1], second[1]  # "between 2020 and 2018" is the same span
                    return _made(min(a, c), max(b, d), tokens, i, second[0])
        if word == "since":  # since A, since the start of A: to today
            at = i + 1
            if tokens[at:at + 3] in (["the", "start", "of"], ["the", "beginning", "of"]):
                at += 3
            found = _longest_point(tokens, at, today)
            if found is not None:
                return _made(found[1][0], max(tomorrow, found[1][0] + timedelta(days=1)), tokens, i, found[0])
    m = re.search(r"\b(?:in the |over the |during the )?(?:last|past) (\d{1,3}) (days?|weeks?|months?)\b", low)
    if m:
        n, unit = int(m.group(1)), m.group(2).rstrip("s")
        start = today - timedelta(days=n) if unit == "day" else today - timedelta(weeks=n) if unit == "week" \
            else _add_months(today.replace(day=1), -n).replace(day=min(today.day, 28))
        return Range(start, tomorrow, m.group(0), m.group(0))
    m = re.search(r"\b(?:(?:in|during|for|of|over) )?(?:the )?" + _RELATIVE.pattern + r"\b", low)
    if m:
        start, end = _relative(m.group(1), m.group(2), today)
        return Range(start, end, m.group(0), m.group(0))
    m = re.search(r"\byesterday\b", low)
    if m:
        return Range(today - timedelta(days=1), today, m.group(0), m.group(0))
    m = re.search(rf"\b(?:(?:in|during|for) )?q([1-4])(?: {_YEAR})?\b", low)
    if m:
        found = point(m.group(0).split(" ", 1)[1] if m.group(0).startswith(("in ", "during ", "for ")) else m.group(0), today)
        if found is not None:
            return Range(found[0], found[1], m.group(0), m.group(0))
    for pattern in (rf"\b(?:on |(?:on )?the )?{_DAY} (?:of )?{_MONTH}(?:,? {_YEAR})?\b",
                    rf"\b(?:on )?{_MONTH} (?:the )?{_DAY}(?:,? {_YEAR})?\b"):
        m = re.search(pattern, low)
        if m and not re.fullmatch(rf"(?:on )?{_MONTH} \d\d\d\d", m.group(0)):
            said = m.group(0)
            found = point(re.sub(r"^(?:on )?(?:the )?", "", said), today)
            if found is not None:
                return Range(found[0], found[1], said, said)
    m = re.search(r"\b(?:(?:in|during|for|of) )?" + _MONTH + r"\.?(?:,? (?:of )?" + _YEAR + r")?\b", low)
    if m and not (m.group(1) == "may" and not re.search(r"\b(?:in|during|for|of) may\b|\bmay (?:19|20)\d\d\b", low)):
        month = _month_number(m.group(1))
        start, end = _month(int(m.group(2)) if m.group(2) else _latest_year(month, today), month)
        return Range(start, end, m.group(0).strip(), m.group(0))
    m = re.search(r"\b(?:(?:in|during|for) )?" + _YEAR + r"\b", low)
    if m:
        year = int(m.group(1))
        return Range(date(year, 1, 1), date(year + 1, 1, 1), m.group(0).strip(), m.group(0))
    return None
