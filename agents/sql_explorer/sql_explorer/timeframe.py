"""Time ranges said in words ("last month", "this week", "in march") as [start, end) dates."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")


@dataclass(frozen=True)
class Range:
    start: date
    end: date  # exclusive
    words: str  # what the user said, for the answer
    said: str  # the text that named it, to take out of the question

    @property
    def label(self) -> str:
        if (self.start.month, self.start.day, self.end.month, self.end.day) == (1, 1, 1, 1) \
                and self.end.year == self.start.year + 1:
            return f"in {self.start.year}"
        if self.start.day == 1 and (self.end - timedelta(days=1)).month == self.start.month and self.end.day == 1:
            return f"in {self.start.strftime('%B %Y')}"
        return f"from {self.start.isoformat()} to {(self.end - timedelta(days=1)).isoformat()}"


def _month(year: int, month: int) -> tuple[date, date]:
    start = date(year, month, 1)
    end = date(year + (month == 12), month % 12 + 1, 1)
    return start, end


ABBREVIATIONS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
                 "oct": 10, "nov": 11, "dec": 12}
NOW = re.compile(r"\b(right now|currently|at the moment|at present|as of (?:now|today)|now|today)\b")


def find_now(text: str) -> str | None:
    """The words that mean "as things are today" ("right now", "currently"), if said."""
    m = NOW.search(text.lower())
    return m.group(0) if m else None


def find_range(text: str, today: date) -> Range | None:
    low = text.lower()
    m = re.search(r"\b(last|previous|this|current) month\b", low)
    if m:
        first = today.replace(day=1)
        if m.group(1) in ("last", "previous"):
            first = (first - timedelta(days=1)).replace(day=1)
        start, end = _month(first.year, first.month)
        return Range(start, end, m.group(0), m.group(0))
    m = re.search(r"\b(last|previous|this|current) week\b", low)
    if m:
        monday = today - timedelta(days=today.weekday())
        if m.group(1) in ("last", "previous"):
            monday -= timedelta(days=7)
        return Range(monday, monday + timedelta(days=7), m.group(0), m.group(0))
    m = re.search(r"\b(last|previous|this|current) year\b", low)
    if m:
        year = today.year - (m.group(1) in ("last", "previous"))
        return Range(date(year, 1, 1), date(year + 1, 1, 1), m.group(0), m.group(0))
    m = re.search(r"\byesterday\b", low)
    if m:
        day = today - timedelta(days=1)
        return Range(day, day + timedelta(days=1), m.group(0), m.group(0))
    m = re.search(r"\b(?:in the )?(?:last|past) (\d{1,3}) days\b", low)
    if m:
        days = int(m.group(1))
        return Range(today - timedelta(days=days), today + timedelta(days=1), m.group(0), m.group(0))
    names = "|".join(MONTHS) + "|" + "|".join(ABBREVIATIONS)
    m = re.search(r"\b(?:(?:in|during|for|of) )?(" + names + r")\.?(?: (?:of )?((?:19|20)\d\d))?\b", low)
    if m and not (m.group(1) == "may" and not re.search(r"\b(?:in|during|for|of) may\b|\bmay (?:19|20)\d\d\b", low)):
        word = m.group(1)
        month = MONTHS.index(word) + 1 if word in MONTHS else ABBREVIATIONS[word]
        year = int(m.group(2)) if m.group(2) else (today.year if month <= today.month else today.year - 1)
        start, end = _month(year, month)
        return Range(start, end, m.group(0).strip(), m.group(0))
    m = re.search(r"\b(?:(?:in|during|for|since) )?((?:19|20)\d\d)\b", low)
    if m:
        year = int(m.group(1))
        end = date(today.year + 1, 1, 1) if m.group(0).startswith("since") else date(year + 1, 1, 1)
        return Range(date(year, 1, 1), end, m.group(0).strip(), m.group(0))
    return None
