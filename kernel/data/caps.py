"""What one query result may hold in the kernel: rows stop at a count or a size, said with a flag."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

MAX_ROWS = 10_000
MAX_RESULT_BYTES = 8_000_000  # about: the rows' values as text


def capped(rows_in: Iterable[Any], max_rows: int, max_bytes: int | None) -> tuple[list[tuple[Any, ...]], bool]:
    """At most `max_rows` rows and about `max_bytes` of them; True when the rows were cut.
    Reading stops there, so a cursor that yields rows one at a time is read no further."""
    rows: list[tuple[Any, ...]] = []
    size = 0
    for row in rows_in:
        size += sum(len(str(v)) + 1 for v in row)
        if len(rows) >= max_rows or (max_bytes is not None and size > max_bytes):
            return rows, True
        rows.append(tuple(row))
    return rows, False


def truncated_by(truncated: bool, rows: int, max_rows: int) -> str | None:
    """Which cap cut a result: "rows", "bytes", or None when it is whole."""
    if not truncated:
        return None
    return "rows" if rows >= max_rows else "bytes"
