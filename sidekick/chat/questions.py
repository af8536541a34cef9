"""A function's result that asks the user something (`dreamer.sdk.ask_user`) becomes Sidekick's question.

The result `{"ask_user": {"question", "options": [{"label", "args"}]}}` turns into a
"choose" clarification whose options are calls of the same function with the first
call's arguments plus the option's; the user's pick ("2", "operations and logistics")
runs that call. The result is an agent's words, so it is checked like any other input:
a malformed one is shown as an ordinary result, and option arguments may only fill the
function's own parameters.
"""

from __future__ import annotations

from typing import Any

from dreamer.sidekick.planner.base import Clarification, FunctionFacts, Option, PartialPlan, PlanContext, Step, Tool

KEY = "ask_user"
MAX_OPTIONS = 12
MAX_LABEL = 200


def question_from(step: Step, result: Any, tool: Tool, context: PlanContext) -> Clarification | None:
    asked = result.get(KEY) if isinstance(result, dict) and len(result) == 1 else None
    if not isinstance(asked, dict):
        return None
    question, options = asked.get("question"), asked.get("options")
    if not isinstance(question, str) or not question.strip() or not isinstance(options, list):
        return None
    if not 1 <= len(options) <= MAX_OPTIONS:
        return None
    picks: list[Option] = []
    for option in options:
        if not isinstance(option, dict) or not isinstance(option.get("label"), str) or not isinstance(option.get("args"), dict):
            return None
        if any(name not in tool.properties for name in option["args"]):
            return None
        call = Step(step.agent, step.function, {**dict(step.args), **option["args"]})
        picks.append(Option(" ".join(option["label"].split())[:MAX_LABEL], call))
    partial = PartialPlan(
        steps=(picks[0].step,),
        choices=(tuple(o.step for o in picks),),
        facts={tool.name: FunctionFacts.of(tool)},
        now=context.local_now().isoformat(),
        timezone=context.timezone,
    )
    return Clarification("choose", " ".join(question.split())[:500], partial, options=tuple(picks))
