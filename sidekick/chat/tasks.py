"""Sidekick tasks: an agent hands Sidekick a job in words.

`ctx.task("find recipes with what is in the fridge", tools=["files.search"], on_complete="done")`
becomes a one-shot model loop with no conversation over the asking agent's own
exported functions and the tools it listed (kernel/tasks/syscall.py checks which),
called as Sidekick, so every call is checked and audited as any other. Nobody is
there to answer, so a step that needs the user (a confirm=True function, a
clarifying question) is not run: the task ends and says what it was waiting for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dreamer.kernel.invocations.invoker import Invoker
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.llm import Gateway
from dreamer.sidekick.chat.steps import run_step
from dreamer.sidekick.planner import PlanContext, Step, Tool
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
    invoker: Invoker, who: Principal, prompt: str, tools: Sequence[Tool], *, gateway: Gateway,
    loop: ModelLoop | None = None,
) -> TaskOutcome:
    calls: list[dict[str, Any]] = []
    by_name = {t.name: t for t in tools}

    async def call(step: Step) -> dict[str, Any]:
        if len(calls) >= MAX_CALLS:
            return {"agent": step.agent, "function": step.function, "args": dict(step.args), "ok": False,
                    "error": {"code": "limit", "message": f"a task makes at most {MAX_CALLS} calls"}}
        done = await run_step(invoker, who, step, by_name.get(step.name))
        calls.append(done)
        return done

    reply, pending, failed = "Done.", None, None
    context = PlanContext(timezone=who.timezone)
    async for event in (loop or ModelLoop()).run(prompt, tools, [], call, gateway, who.user_id, context):
        if event["event"] == "reply":
            reply, pending, failed = event["text"], event["pending"], event.get("failed")
    if pending is not None:
        return TaskOutcome(False, reply, calls, needs_user=pending.question)
    # A model that failed, fell silent or ran out of steps did not do the task.
    return TaskOutcome(failed is None and all(c["ok"] for c in calls), reply, calls)
