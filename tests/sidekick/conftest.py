"""Fixtures for the planner tests: the starter agents' tools, a fixed clock, a planner.

The tools come from tools.json, which make_tools.py writes from the agents' real
code (test_fixture.py checks it is current). The clock is Wednesday 2025-03-12,
09:00 in Berlin, so "friday" is 2025-03-14 and "tomorrow" is 2025-03-13.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from routing_eval import load_tools
from sidekick_support import NOW, TZ

from dreamer.sidekick.planner import (
    Clarification,
    OfflinePlanner,
    Plan,
    PlanContext,
    Tool,
)


@pytest.fixture(scope="session")
def tools() -> list[Tool]:
    return load_tools()


@pytest.fixture
def context() -> PlanContext:
    return PlanContext(now=NOW, timezone=TZ)


@pytest.fixture
def ask(tools: list[Tool]) -> Callable[..., Plan]:
    """ask(text, pending=None, tools=None): the offline planner's plan for one message."""
    planner = OfflinePlanner()

    def run(text: str, pending: Clarification | None = None, tools_: list[Tool] | None = None) -> Plan:
        context = PlanContext(now=NOW, timezone=TZ, pending=pending)
        return planner.plan(text, tools if tools_ is None else tools_, context)

    return run
