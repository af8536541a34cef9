"""A kept query result as a file: CSV or XLSX, written from the rows the kernel holds for its user.

Cells that a spreadsheet would run as a formula (text starting with = + - @, or a tab or
carriage return) are prefixed with an apostrophe: a value typed into the HR system by
anyone must not become a formula on the reader's machine (CSV/formula injection).
"""

from __future__ import annotations

import csv
import io
from typing import Any

from dreamer.kernel.data.results import Result
from dreamer.contracts.errors import DreamerError

FORMATS = {"csv": "text/csv; charset=utf-8",
           "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def export(result: Result, fmt: str) -> tuple[bytes, str]:
    """(file bytes, media type) of the whole result."""
    if fmt not in FORMATS:
        raise DreamerError("invalid_argument", f"format must be one of {', '.join(FORMATS)}, not {str(fmt)[:20]!r}")
    if fmt == "csv":
        text = io.StringIO()
        writer = csv.writer(text)
        writer.writerow([_cell(c) for c in result.columns])
        writer.writerows([[_cell(v) for v in row] for row in result.rows])
        return text.getvalue().encode("utf-8"), FORMATS[fmt]
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    sheet = book.create_sheet("result")
    sheet.append([_cell(c) for c in result.columns])
    for row in result.rows:
        sheet.append([_cell(v) for v in row])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue(), FORMATS[fmt]
