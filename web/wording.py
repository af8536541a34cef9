"""How the pages say what happened: a call as a sentence ("Sidekick asked grocery to add
items: milk, eggs"), a count of an answer's calls, runs grouped by day. The same wording
is built for live answers in static/chat.js (`callSentence`); keep the two alike."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

MAX_SHOWN = 60  # characters of arguments quoted in a sentence


def _words(function: str) -> str:
    return function.replace("_", " ").strip() or function


def _shown(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(_shown(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {_shown(v)}" for k, v in value.items())
    return str(value)


def args_phrase(args: Any) -> str:
    """The arguments as a short phrase: 'milk, eggs'; '' when there are none."""
    if not isinstance(args, dict) or not args:
        return ""
    text = "; ".join(_shown(v) for v in args.values() if v not in (None, "", [], {}))
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1].rstrip() + "…"


def call_sentence(call: dict[str, Any]) -> str:
    said = args_phrase(call.get("args"))
    return f"Asked {call.get('agent')} to {_words(str(call.get('function', '')))}" + (f": {said}" if said else "")


def calls_summary(calls: list[dict[str, Any]]) -> str:
    agents = sorted({str(c.get("agent")) for c in calls})
    failed = sum(1 for c in calls if not c.get("ok"))
    text = f"Details: {len(calls)} call{'' if len(calls) == 1 else 's'} to {', '.join(agents)}"
    return text + (f", {failed} failed" if failed else "")


def _who(run: dict[str, Any]) -> str:
    caller = str(run.get("caller") or "")
    if caller == "user":
        return "You"
    if caller == "sidekick":
        return "Sidekick"
    if caller == "trigger":
        kind = (run.get("trigger") or {}).get("type")
        return {"cron": "A schedule", "webhook": "A webhook", "event": "An event"}.get(kind, "A trigger")
    return caller or "Someone"


def run_sentence(run: dict[str, Any]) -> str:
    """'Sidekick asked grocery to add items: milk' for an invocation row of GET /v1/invocations."""
    said = args_phrase(run.get("args"))
    return (f"{_who(run)} asked {run.get('agent')} to {_words(str(run.get('function', '')))}"
            + (f": {said}" if said else ""))


def outcome_word(status: str) -> str:
    return {"succeeded": "done", "failed": "failed", "running": "running", "queued": "waiting to run",
            "cancelled": "cancelled", "interrupted": "interrupted"}.get(status, status)


def day_label(iso: str | None, now: datetime | None = None) -> str:
    if not iso:
        return "Earlier"
    try:
        at = datetime.fromisoformat(iso)
    except ValueError:
        return "Earlier"
    at = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
    today = (now or datetime.now(timezone.utc)).date()
    day = at.astimezone(timezone.utc).date()
    if day == today:
        return "Today"
    if day == today - timedelta(days=1):
        return "Yesterday"
    if day > today - timedelta(days=7):
        return at.strftime("%A")
    return at.strftime("%d %B %Y")


def group_runs(runs: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Runs by day, newest first; a call another run on this page made sits under it (its `children`)."""
    by_id = {r["id"]: {**r, "children": []} for r in runs}
    tops: list[dict[str, Any]] = []
    for r in runs:
        row = by_id[r["id"]]
        parent = by_id.get(r.get("parent_id") or "")
        (parent["children"] if parent is not None else tops).append(row)
    days: list[tuple[str, list[dict[str, Any]]]] = []
    for row in tops:
        label = day_label(row.get("created_at"))
        if not days or days[-1][0] != label:
            days.append((label, []))
        days[-1][1].append(row)
    return days
