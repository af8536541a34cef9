"""How the CLI speaks: rich for people, plain JSON on stdout for `--json`, errors on stderr.

Consoles are made per invocation, not at import, so they follow whatever
sys.stdout / sys.stderr are at the time (test runners swap them).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

PIPE_WIDTH = 1000
RISK_STYLE = {"low": "green", "medium": "yellow", "high": "bold red"}


class Output:
    def __init__(self, json_mode: bool = False) -> None:
        self.json_mode = json_mode
        self.out = _console(sys.stdout)
        self.err = _console(sys.stderr)

    # -- machine output ----------------------------------------------------

    def json(self, data: Any) -> None:
        # Plain write, not rich: rich would wrap long lines and JSON must parse.
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()

    # -- human output --------------------------------------------------------

    def say(self, text: str) -> None:
        """A line for people on stdout; silent in --json mode so stdout stays parseable."""
        if not self.json_mode:
            self.out.print(text)

    def say_part(self, text: str) -> None:
        """Part of a line (a streamed reply): no newline; silent in --json mode."""
        if not self.json_mode:
            self.out.print(text, end="")

    def note(self, text: str) -> None:
        """A side remark on stderr (shown in both modes)."""
        self.err.print(text)

    def pretty_json(self, data: Any) -> None:
        self.out.print_json(data=data, default=str)

    def table(self, table: Table) -> None:
        self.out.print(table)

    def error(self, code: str, message: str) -> None:
        if self.json_mode:
            # The JSON goes to stdout (where --json output always is) and, as one line,
            # to stderr (where errors always are), so a script finds it on either stream.
            body = {"error": {"code": code, "message": message}}
            self.json(body)
            sys.stderr.write(json.dumps(body, ensure_ascii=False) + "\n")
            sys.stderr.flush()
            return
        self.err.print(f"[bold red]error:[/] {escape(message)}")


def _console(stream: TextIO) -> Console:
    # Piped output is read by programs and grep: never wrap a line there. On a
    # terminal rich fits the window.
    wide = None if _isatty(stream) or os.environ.get("COLUMNS") else PIPE_WIDTH
    return Console(file=stream, highlight=False, width=wide)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def make_table(columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> Table:
    table = Table(title=title, show_lines=False, header_style="bold", expand=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(cell if isinstance(cell, Text) else Text(cell_text(cell)) for cell in row))
    return table


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def risk(level: Any) -> Text:
    text = cell_text(level)
    return Text(text, style=RISK_STYLE.get(text, ""))


def short_time(value: Any) -> str:
    """An ISO timestamp from the kernel as local 'YYYY-MM-DD HH:MM:SS'; anything else unchanged."""
    if not isinstance(value, str):
        return cell_text(value)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S")
