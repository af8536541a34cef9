"""How the CLI speaks: rich for people, plain JSON on stdout for `--json` (errors too), other errors on stderr.

Consoles are made per invocation, not at import, so they follow whatever
sys.stdout / sys.stderr are at the time (test runners swap them).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

PIPE_WIDTH = 1000

# Terminal control sequences an agent or tool could write to act on the user's terminal:
# OSC (ESC ] ... BEL or ST: window title, clipboard via OSC 52, hyperlinks), DCS/SOS/PM/APC
# (ESC P/X/^/_ ... ST), CSI (ESC [ ...: cursor moves, erasing what was printed), other
# ESC sequences, their 8-bit C1 forms (\x9b, \x9d, ...), and every other C0/C1 control
# but newline and tab (a carriage return or backspace can hide text behind other text).
_CONTROL = re.compile(
    r"\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # ... in their 8-bit forms
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"  # CSI
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"  # any other ESC sequence, or a lone ESC
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # every other control but \t and \n
)


def safe_text(text: str) -> str:
    """`text` with every terminal control sequence removed: the one place the CLI makes
    what an agent or tool wrote safe to print (newlines and tabs are kept)."""
    return _CONTROL.sub("", text)


def safe_data(value: Any) -> Any:
    """safe_text() applied to every string (keys too) in JSON-like data."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_data(k): safe_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [safe_data(v) for v in value]
    return value


def _json_safe(dumped: str) -> str:
    """json.dumps escapes C0 controls but writes C1 (\x80-\x9f) and DEL raw: escape them too."""
    return re.sub(r"[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", dumped)


class SafeConsole(Console):
    """A rich Console that strips control sequences from every string it is given; rich's
    own styling is added after, when rendering, so it is untouched."""

    def render_str(self, text: str, **kwargs: Any) -> Text:  # type: ignore[override]
        return super().render_str(safe_text(text), **kwargs)
RISK_STYLE = {"low": "green", "medium": "yellow", "high": "bold red"}


class Output:
    def __init__(self, json_mode: bool = False) -> None:
        self.json_mode = json_mode
        self.out = _console(sys.stdout)
        self.err = _console(sys.stderr)

    # -- machine output ----------------------------------------------------

    def json(self, data: Any) -> None:
        # Plain write, not rich: rich would wrap long lines and JSON must parse.
        sys.stdout.write(_json_safe(json.dumps(data, indent=2, ensure_ascii=False, default=str)) + "\n")
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
        self.out.print_json(data=safe_data(data), default=str)

    def table(self, table: Table) -> None:
        self.out.print(table)

    def error(self, code: str, message: str) -> None:
        if self.json_mode:
            # On stdout only, where --json output always is: a script reading both streams
            # would otherwise see the error twice (decision 0043). The exit code says it failed.
            self.json({"error": {"code": code, "message": message}})
            return
        self.err.print(f"[bold red]error:[/] {escape(message)}")


def _console(stream: TextIO) -> Console:
    # Piped output is read by programs and grep: never wrap a line there. On a
    # terminal rich fits the window.
    wide = None if _isatty(stream) or os.environ.get("COLUMNS") else PIPE_WIDTH
    return SafeConsole(file=stream, highlight=False, width=wide)


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
        table.add_row(*(Text(safe_text(cell.plain), style=cell.style) if isinstance(cell, Text) else Text(cell_text(cell)) for cell in row))
    return table


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (dict, list)):
        return _json_safe(json.dumps(value, ensure_ascii=False, default=str))
    return safe_text(str(value))


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
