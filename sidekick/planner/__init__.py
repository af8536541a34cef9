"""Sidekick's planners: a user's message in, a Plan (steps, reply or question) out.

    from dreamer.sidekick.planner import OfflinePlanner, PlanContext, tools_from_agents

    tools = tools_from_agents(agents)            # the `dreamer agents --json` shape
    plan = OfflinePlanner().plan("add milk and eggs to my list", tools, PlanContext(now=..., timezone="Europe/Berlin"))
    if plan.pending:                             # ask plan.pending.question; next turn:
        plan = OfflinePlanner().plan(answer, tools, PlanContext(pending=plan.pending, ...))

See base.py for the executor's rules.
"""

from dreamer.sidekick.planner.base import (
    Clarification,
    FunctionFacts,
    Option,
    PartialPlan,
    Plan,
    PlanContext,
    Planner,
    Step,
    Tool,
    tools_from_agents,
)
from dreamer.sidekick.planner.dialog import advance, resume
from dreamer.sidekick.planner.offline import OfflinePlanner

__all__ = [
    "Clarification",
    "FunctionFacts",
    "OfflinePlanner",
    "Option",
    "PartialPlan",
    "Plan",
    "PlanContext",
    "Planner",
    "Step",
    "Tool",
    "advance",
    "resume",
    "tools_from_agents",
]
