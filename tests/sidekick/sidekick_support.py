"""Shared by the planner tests: the fixed clock and small helpers."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from dreamer.sidekick.planner import Plan

TZ = "Europe/Berlin"
# A Wednesday morning: "friday" is 2025-03-14, "tomorrow" 2025-03-13, "next wednesday" 2025-03-19.
NOW = datetime(2025, 3, 12, 9, 0, tzinfo=ZoneInfo(TZ))


def calls(plan: Plan) -> list[tuple[str, dict]]:
    """The plan's steps as (agent.function, args) pairs."""
    return [(s.name, dict(s.args)) for s in plan.steps]
