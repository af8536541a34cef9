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
        if self.start.day == 1 and (self.end - timedelta(days=1)).month == self.start.month and self.end.day == 1:
            return f"in {self.start.strftime('%B %Y')}"
        return f"from {self.start.isoformat()} to {(self.end - timedelta(days=1)).isoformat()}"


def _month(year: int, month: int) -> tuple[date, date]:
    start = date(year, month, 1)
    end = date(year + (month == 12), month % 12 + 1, 1)
    return start, end


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
    m = re.search(r"\b(yesterday|today)\b", low)
    if m:
        day = today - timedelta(days=1 if m.group(1) == "yesterday" else 0)
        return Range(day, day + timedelta(days=1), m.group(0), m.group(0))
    m = re.search(r"\b(?:in the )?(?:last|past) (\d{1,3}) days\b", low)
    if m:
        days = int(m.group(1))
        return Range(today - timedelta(days=days), today + timedelta(days=1), m.group(0), m.group(0))
    m = re.search(r"\b(?:in |during )?(" + "|".join(MONTHS) + r")(?: (\d{4}))?\b", low)
    if m:
        month = MONTHS.index(m.group(1)) + 1
        year = int(m.group(2)) if m.group(2) else (today.year if month <= today.month else today.year - 1)
        start, end = _month(year, month)
        return Range(start, end, m.group(0).strip(), m.group(0))
    return None
