"""Words for what Sidekick did, made from function results without a model."""

from __future__ import annotations

from typing import Any

PREFERRED_KEYS = ("summary", "answer", "message", "reply", "text")
MAX_ITEMS = 8


def short(value: Any, depth: int = 0) -> str:
    if isinstance(value, str):
        return value if len(value) <= 200 else value[:197] + "…"
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "nothing"}[value]
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        if not value:
            return "none"
        shown = [short(v, depth + 1) for v in value[:MAX_ITEMS]]
        more = f" and {len(value) - MAX_ITEMS} more" if len(value) > MAX_ITEMS else ""
        return ", ".join(shown) + more
    if isinstance(value, dict):
        if depth > 1:
            return str(value.get("name") or value.get("title") or f"{len(value)} fields")
        for key in PREFERRED_KEYS:
            if isinstance(value.get(key), str) and value[key].strip():
                return short(value[key], depth + 1)
        if "name" in value and isinstance(value["name"], str):
            return value["name"]
        parts = [f"{k.replace('_', ' ')}: {short(v, depth + 1)}" for k, v in list(value.items())[:5]]
        return "; ".join(parts)
    return str(value)


def step_line(summary: str, ok: bool, result: Any = None, error: dict[str, Any] | None = None) -> str:
    if not ok:
        message = (error or {}).get("message", "it failed")
        return f"✗ {summary}: {message}"
    return f"✓ {summary}: {short(result)}"
