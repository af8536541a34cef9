"""Sidekick tasks: an agent hands Sidekick a job in words, over its own functions.

`ctx.task("find recipes with what is in the fridge", tools=["suggest"], on_complete="done")`
becomes a one-shot Sidekick turn with no conversation: the model loop (or, with no
model configured, the offline planner) may call only the listed exported functions
of the asking agent, as Sidekick, so every call is checked and audited as any other.
Nobody is there to answer, so a step that needs the user (a confirm=True function, a
clarifying question) is not run: the task ends and says what it was waiting for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dreamer.kernel.invocations.service import Invoker, Principal
from dreamer.kernel.llm import Gateway
from dreamer.sidekick.chat.replies import step_line
from dreamer.sidekick.chat.steps import run_step
from dreamer.sidekick.planner import OfflinePlanner, PlanContext, Planner, Step, Tool
from dreamer.sidekick.planner.model import ModelLoop

MAX_CALLS = 20


@dataclass
class TaskOutcome:
    ok: bool
    reply: str
    calls: list[dict[str, Any]] = field(default_factory=list)
    needs_user: str | None = None  # the question or confirmation the task stopped at

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "reply": self.reply, "calls": self.calls, "needs_user": self.needs_user}


async def run_task(
    invoker: Invoker,
    who: Principal,
    prompt: str,
    tools: Sequence[Tool],
    *,
    gateway: Gateway | None,
    planner: Planner | None = None,
    loop: ModelLoop | None = None,
) -> TaskOutcome:
    calls: list[dict[str, Any]] = []

    async def call(step: Step) -> dict[str, Any]:
        if len(calls) >= MAX_CALLS:
            return {"agent": step.agent, "function": step.function, "args": dict(step.args), "ok": False,
                    "error": {"code": "limit", "message": f"a task makes at most {MAX_CALLS} calls"}}
        done = await run_step(invoker, who, step)
        calls.append(done)
        return done

    context = PlanContext(timezone=who.timezone)
    if gateway is not None:
        reply, pending = "Done.", None
        async for event in (loop or ModelLoop()).run(prompt, tools, [], call, gateway, who.user_id, context):
            if event["event"] == "reply":
                reply, pending = event["text"], event["pending"]
        if pending is not None:
            return TaskOutcome(False, reply, calls, needs_user=pending.question)
        return TaskOutcome(all(c["ok"] for c in calls), reply, calls)

    plan = (planner or OfflinePlanner()).plan(prompt, list(tools), context)
    if plan.pending is not None:
        return TaskOutcome(False, plan.pending.question, calls, needs_user=plan.pending.question)
    by_name = {t.name: t for t in tools}
    lines = []
    for step in plan.steps:
        tool = by_name.get(step.name)
        if tool is None:
            continue
        if tool.confirm:
            question = f"{tool.summary} needs the user's confirmation, and a task cannot ask for it"
            return TaskOutcome(False, question, calls, needs_user=question)
        done = await call(step)
        lines.append(step_line(tool.summary, done["ok"], done.get("result"), done.get("error")))
    if not plan.steps:
        return TaskOutcome(False, plan.reply or "Nothing in the task matched the functions it may use.", calls)
    return TaskOutcome(all(c["ok"] for c in calls), "\n".join(lines), calls)
