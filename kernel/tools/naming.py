"""Tool names: `server.tool`, where server is the tool bundle's name and tool an MCP tool name.

A tool's name becomes part of a scope (`tool:<server>.<tool>`), so only names the
scope grammar can carry are usable; anything else a server declares is reported,
not guessed at.
"""

from __future__ import annotations

import re

from dreamer.contracts.manifest import IDENT_RE, NAME_RE
from dreamer.contracts.names import NAME
from dreamer.contracts.errors import DreamerError

SERVER_PATTERN = re.compile(NAME_RE)
TOOL_PATTERN = re.compile(IDENT_RE)


def qualified(server: str, tool: str) -> str:
    return f"{server}.{tool}"


def split(name: object) -> tuple[str, str]:
    """`calendar.list_events` → ("calendar", "list_events"), or invalid_argument in one sentence."""
    if not isinstance(name, str) or "." not in name:
        raise DreamerError("invalid_argument", f"{_clip(name)} is not a tool name; tools are named server.tool, e.g. calendar.list_events")
    server, _, tool = name.partition(".")
    check_server(server)
    check_tool(tool)
    return server, tool


def check_server(server: object) -> str:
    if not isinstance(server, str) or not SERVER_PATTERN.fullmatch(server):
        raise DreamerError("invalid_argument", f"{_clip(server)} is not a tool server name ({NAME})")
    return server


def check_tool(tool: object) -> str:
    if not isinstance(tool, str) or not TOOL_PATTERN.fullmatch(tool):
        raise DreamerError("invalid_argument", f"{_clip(tool)} is not a tool name (letters, digits and _, up to 64)")
    return tool


def usable_tool_name(tool: str) -> bool:
    return TOOL_PATTERN.fullmatch(tool) is not None


def _clip(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
