"""The `tasks.create` syscall: `ctx.task(prompt, tools=[...], on_complete="handler")`.

The agent hands Sidekick a job in words. Sidekick runs it in the kernel (the model
loop, or the offline planner when no model is configured) over the asking agent's own
exported functions named in `tools`, as Sidekick for the user, so every call is
checked and audited like any other. When it ends, `on_complete` (a function of the
same agent taking one argument) is queued as a background invocation with the
outcome: {"task_id", "ok", "reply", "calls", "needs_user"}; from there the runner
makes it durable and retries it by the function's policy.

Tasks use the model gateway, which costs the user money, so they need the `llm` grant.
A task itself lives in the kernel's memory: one cut off by a kernel restart is not
resumed, and its handler is then not called (the audit log shows it started).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.errors import DreamerError
from dreamer.kernel.invocations.service import Caller

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
        raise DreamerError("invalid_argument", f"ctx.task's tools must be a list of at most {MAX_TOOLS} function names")
    if handler is not None and not isinstance(handler, str):
        raise DreamerError("invalid_argument", "ctx.task's on_complete must be the name of one of this agent's functions")
    ctx.require("llm", action="tasks.create", target=ctx.agent, detail={"tools": len(names or []), "chars": len(prompt)})

    invoker = ctx.invoker
    installed = invoker.cache.agent(ctx.who.user_id, ctx.agent)
    if installed is None:
        raise DreamerError("not_found", f"{ctx.agent} is not installed")
    exported = {spec["name"]: spec for spec in installed.functions if spec.get("exported")}
    chosen = []
    for name in names if names is not None else sorted(exported):
        short = name.removeprefix(f"{ctx.agent}.")
        if short not in exported:
            raise DreamerError(
                "invalid_argument",
                f"a task may use only {ctx.agent}'s own exported functions, and {name[:80]!r} is not one of them",
            )
        chosen.append(exported[short])
    if not chosen:
        raise DreamerError("invalid_argument", f"{ctx.agent} exports no function a task could use")
    argument = None
    if handler is not None:
        spec = installed.function(handler)  # not_found, in one sentence, for an unknown name
        properties = list((spec.get("parameters") or {}).get("properties") or {})
        if len(properties) > 1:
            raise DreamerError(
                "invalid_argument", f"on_complete {handler!r} must take one argument (the task's outcome), not {len(properties)}"
            )
        argument = properties[0] if properties else None
    if len(_running) >= MAX_RUNNING:
        raise DreamerError("conflict", f"{MAX_RUNNING} Sidekick tasks are running already; try again when one has finished")

    from dreamer.sidekick.planner import Tool

    tools = [Tool.from_spec(ctx.agent, spec, installed.description) for spec in chosen]
    task_id = "task_" + uuid.uuid4().hex
    kernel = invoker.kernel
    who, agent, parent = ctx.who, ctx.agent, ctx.invocation_id

    async def run() -> None:
        from dreamer.sidekick.chat.tasks import run_task

        try:
            outcome = (await run_task(invoker, who, prompt, tools, gateway=kernel.sidekick._gateway())).to_dict()
        except Exception as exc:  # noqa: BLE001 - a planner bug ends this task, not the kernel
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
