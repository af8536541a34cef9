"""todo: the agent's own checklist for a task, kept in its data folder."""

from __future__ import annotations

import json

from .workspace import ToolError, Workspace, save_json, state_dir

STATUSES = ("pending", "in_progress", "done")
MAX_ITEMS = 100


def _file(ws: Workspace):
    return state_dir() / f"todo-{ws.key}.json"


def load(ws: Workspace) -> list[dict]:
    try:
        items = json.loads(_file(ws).read_text())
    except (OSError, ValueError):
        return []
    return items if isinstance(items, list) else []


def todo(ws: Workspace, items: list[dict] | None = None) -> dict:
    """Without items: the list. With items ([{"text", "status"}]): replace the list."""
    if items is not None:
        if not isinstance(items, list) or len(items) > MAX_ITEMS:
            raise ToolError("invalid_argument", f"items is a list of at most {MAX_ITEMS} {{text, status}} objects")
        clean = []
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
                raise ToolError("invalid_argument", "each todo item needs a text")
            status = item.get("status", "pending")
            if status not in STATUSES:
                raise ToolError("invalid_argument", f"a todo status is one of {', '.join(STATUSES)}")
            clean.append({"text": item["text"].strip()[:500], "status": status})
        save_json(_file(ws), clean)
    current = load(ws)
    return {"items": current, "open": sum(1 for i in current if i.get("status") != "done")}
