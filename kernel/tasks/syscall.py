"""The `tasks.create` syscall: `ctx.task(prompt, tools=[...], on_complete="handler")`.

The agent hands Sidekick a job in words. Sidekick (the host's TaskRunner, kernel/ports.py)
runs the model loop in the kernel
over the asking agent's own exported functions plus the tools (MCP, `server.tool`)
listed in `tools`, each of which the agent must hold a `tool:` grant for; calls are
made as Sidekick for the user, so every one is checked and audited like any other.
When it ends, `on_complete` (a function of the same agent taking one argument) is
queued as a background invocation with the outcome: {"task_id", "ok", "reply",
"calls", "needs_user"}; from there the runner makes it durable and retries it by the
function's policy.

A task needs a model (the offline planner serves people, not open-ended jobs) and,
since the model costs the user money, the `llm` grant. A task itself lives in the
kernel's memory: one cut off by a kernel restart is not resumed, and its handler is
then not called (the audit log shows it started).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from dreamer.kernel.audit.log import append as audit
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.principal import Caller
from dreamer.kernel.permissions.gate import decide

if TYPE_CHECKING:
    from dreamer.kernel.invocations.syscalls import SyscallContext

log = logging.getLogger("dreamer.tasks")

MAX_PROMPT_CHARS = 4000
MAX_TOOLS = 50
# Running at once per kernel: a task holds no worker while it waits, but each one
# may call functions and the model, so an agent cannot start them without bound.
MAX_RUNNING = 32

_running: set[asyncio.Task[None]] = set()


async def tasks_create(ctx: "SyscallContext", params: dict[str, Any]) -> dict[str, Any]:
    prompt, names, handler = params.get("prompt"), params.get("tools"), params.get("on_complete")
    if not isinstance(prompt, str) or not prompt.strip() or len(prompt) > MAX_PROMPT_CHARS:
        raise DreamerError("invalid_argument", f"ctx.task needs a prompt of 1 to {MAX_PROMPT_CHARS} characters")
    if names is not None and (not isinstance(names, list) or len(names) > MAX_TOOLS
                              or not all(isinstance(n, str) for n in names)):
        raise DreamerError("invalid_argument", f"ctx.task's tools must be a list of at most {MAX_TOOLS} tool names (server.tool)")
    if handler is not None and not isinstance(handler, str):
        raise DreamerError("invalid_argument", "ctx.task's on_complete must be the name of one of this agent's functions")
    ctx.require("llm", action="tasks.create", target=ctx.agent, detail={"tools": len(names or []), "chars": len(prompt)})

    invoker = ctx.invoker
    runner = invoker.kernel.task_runner
    if runner is None or not runner.has_model():
        raise DreamerError(
            "not_available",
            "Sidekick tasks need a model and none is configured (set DREAMER_LLM_PROVIDER; docs/MODELS.md)",
        )
    installed = invoker.cache.agent(ctx.who.user_id, ctx.agent)
    if installed is None:
        raise DreamerError("not_found", f"{ctx.agent} is not installed")
    exported = [spec for spec in installed.functions if spec.exported]
    if names:
        grants = invoker.cache.grants(ctx.who.user_id, ctx.agent)
        declared = invoker.cache.declared(ctx.who.user_id, ctx.agent)
        for name in names:
            try:
                decision = decide(grants, ctx.agent, f"tool:{name}", declared)
            except ValueError:
                raise DreamerError("invalid_argument", f"{name[:80]!r} is not a tool name (server.tool)") from None
            decision.require(f"give a task the tool {name!r}")
    if not exported and not names:
        raise DreamerError("invalid_argument", f"{ctx.agent} exports no function and names no tool a task could use")
    # Raises not_found for a named tool the user has no enabled server tool for.
    plan = runner.plan(ctx.who, ctx.agent, installed.description, exported, names or [])
    argument = None
    if handler is not None:
        spec = installed.function(handler)  # not_found, in one sentence, for an unknown name
        properties = list(spec.parameters.get("properties") or {})
        if len(properties) > 1:
            raise DreamerError(
                "invalid_argument", f"on_complete {handler!r} must take one argument (the task's outcome), not {len(properties)}"
            )
        argument = properties[0] if properties else None
    if len(_running) >= MAX_RUNNING:
        raise DreamerError("conflict", f"{MAX_RUNNING} Sidekick tasks are running already; try again when one has finished")

    task_id = "task_" + uuid.uuid4().hex
    who, agent, parent = ctx.who, ctx.agent, ctx.invocation_id

    async def run() -> None:
        try:
            outcome = await runner.run(who, prompt, plan)
        except Exception as exc:
            log.exception("Sidekick task %s of %s failed", task_id, agent)
            outcome = {"ok": False, "reply": f"the task failed inside Sidekick ({type(exc).__name__})",
                       "calls": [], "needs_user": None}
        await invoker.writer.write(lambda conn: audit(
            conn, user_id=who.user_id, actor=f"sidekick for agent:{agent}", action="tasks.done", target=task_id,
            decision="allow", detail={"ok": outcome["ok"], "calls": len(outcome["calls"])}, invocation_id=parent,
        ))
        if handler is None:
            return
        args = {argument: {"task_id": task_id, **outcome}} if argument else {}
        trigger = {"type": "task", "name": task_id, "depth": 0}
        try:
            await invoker.invoke(who, agent, handler, args, Caller("trigger", trigger=trigger, parent_id=parent))
        except DreamerError as exc:
            log.warning("the on_complete handler %s.%s of task %s was refused: %s", agent, handler, task_id, exc.message)

    task = asyncio.get_running_loop().create_task(run(), name=task_id)
    _running.add(task)
    task.add_done_callback(_running.discard)
    return {"task_id": task_id}


async def stop_all() -> None:
    """At kernel stop: tasks still running are cut off (documented: not resumed)."""
    for task in list(_running):
        task.cancel()
    await asyncio.gather(*_running, return_exceptions=True)
