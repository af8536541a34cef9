"""Sidekick's planners: a user's message in, a Plan (steps, a reply, or a question) out.

    from dreamer.sidekick.planner import OfflinePlanner, PlanContext, tools_from_agents

    tools = tools_from_agents(agents)  # the `dreamer agents --json` shape; exported functions only
    context = PlanContext(now=now, timezone="Europe/Berlin", pending=conversation_pending)
    plan = OfflinePlanner().plan("add milk and eggs to my list", tools, context)
    if plan.pending:   # ask plan.pending.question; store plan.pending.to_dict() with the conversation;
        ...            # the next message goes to plan() again with PlanContext(pending=...) (or to resume())
    else:              # run plan.steps in order (a confirm=True function only when step.confirmed)
        ...

base.py holds the shared types and the executor's rules; dialog.py the questions
and the reading of answers (advance, resume); offline/ the intent engine;
language/ what both know about everyday English (stems, synonyms, typos, days).
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
