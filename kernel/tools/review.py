"""The install review of a tool bundle: where its server runs, what each tool reaches and
whether it writes.

Where the server runs is the kernel's own fact (a stdio server runs in the user's
sandbox with no network; a remote one receives whatever its tools are given). Whether a
tool writes or reaches the outside world comes from the server's MCP annotations
(readOnlyHint, destructiveHint, openWorldHint), which a server may get wrong or lie
about, so the review labels them as the server's claims.
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from dreamer.kernel.permissions.review import scope_rows
from dreamer.kernel.tools.naming import qualified

HINT_NOTE = "from the server's own annotations: hints, not checked by dreamer"


def server_facts(manifest: dict[str, Any]) -> dict[str, Any]:
    server = manifest.get("server") or {}
    if server.get("builtin"):
        return {
            "transport": "kernel",
            "runs": "inside the dreamer kernel; it reaches the internet only through the same net: checks as ctx.fetch",
        }
    if server.get("url"):
        host = urlsplit(server["url"]).hostname or ""
        return {
            "transport": "streamable-http",
            "url": server["url"],
            "runs": f"on {host}, outside dreamer: whatever you or your agents give its tools is sent there",
            "local_address": _local(host),
        }
    return {
        "transport": "stdio",
        "command": server.get("command"),
        "runs": "inside your sandbox, with a data folder of its own and no network",
    }


def tool_row(server: str, tool: dict[str, Any], remote: bool, builtin: bool = False) -> dict[str, Any]:
    notes = tool.get("annotations") or {}
    read_only = notes.get("read_only_hint") is True
    # MCP's defaults: a tool not marked read-only may be destructive and open-world.
    destructive = not read_only and notes.get("destructive_hint") is not False
    open_world = notes.get("open_world_hint") is not False
    if read_only:
        writes = "reads only"
    elif destructive:
        writes = "may change or delete data"
    else:
        writes = "may add data, not delete it"
    if builtin:
        reaches = "the websites the calling agent holds net: grants for (enforced by the kernel)"
    elif remote:
        reaches = "the remote server, and beyond it" if open_world else "the remote server only"
    else:
        reaches = "only its own data folder (sandboxed: this is enforced)"
    return {
        "name": tool["name"],
        "qualified": qualified(server, tool["name"]),
        "description": tool.get("description", ""),
        "writes": writes,
        "reaches": reaches,
        "read_only_hint": read_only,
        "destructive_hint": destructive,
        "open_world_hint": open_world,
        "hints": HINT_NOTE,
    }


def tool_review(
    manifest: dict[str, Any], tools: list[dict[str, Any]], skills: list[dict[str, Any]], problems: list[str]
) -> dict[str, Any]:
    name = manifest["name"]
    facts = server_facts(manifest)
    remote = facts["transport"] == "streamable-http"
    return {
        "name": name,
        "title": manifest.get("title"),
        "version": manifest["version"],
        "kind": "tool",
        "publisher": manifest.get("publisher"),
        "publisher_verified": False,
        "description": manifest.get("description"),
        "server": facts,
        # Each tool is a switch: on unless left out at install (--without tool:NAME.TOOL).
        # A tool server's tools are all on unless switched off (--without): unlike an agent's optional scopes.
        "scopes": [row | {"granted_by_default": True} for row in scope_rows([], [qualified_scope(name, t["name"]) for t in tools])],
        "tools": [tool_row(name, t, remote, facts["transport"] == "kernel") for t in tools],
        "skills": [{"name": s["name"], "description": s["description"]} for s in skills],
        "problems": problems,
        "functions": [],
        "limits": [],
    }


def qualified_scope(server: str, tool: str) -> str:
    return f"tool:{qualified(server, tool)}"


def _local(host: str) -> bool:
    if host in ("localhost",) or host.endswith((".local", ".internal", ".localhost")):
        return True
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return not ip.is_global
