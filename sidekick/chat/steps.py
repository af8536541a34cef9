"""One planned step run as Sidekick: through the kernel, so it is checked and audited."""

from __future__ import annotations

from typing import Any

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.invoker import Invoker
from dreamer.kernel.invocations.principal import Caller, Principal
from dreamer.kernel.tools.registry import Caller as ToolCaller
from dreamer.sidekick.planner import Step, Tool


async def run_step(invoker: Invoker, who: Principal, step: Step, tool: Tool | None = None) -> dict[str, Any]:
    """The call as the chat stream and a task report it: args, ok, result or error, invocation id.

    A step whose Tool is of kind "tool" calls the user's tool server through the registry."""
    call: dict[str, Any] = {"agent": step.agent, "function": step.function, "args": dict(step.args)}
    try:
        if tool is not None and tool.kind == "tool":
            registry = invoker.tools
            if registry is None:
                raise DreamerError("not_available", "this kernel has no tool registry")
            value = await registry.call(
                who.user_id, who.user_name, step.name, dict(step.args), ToolCaller(actor=f"sidekick for {who.actor}")
            )
            return call | {"ok": True, "result": value, "invocation_id": None, "tool": True}
        outcome = await invoker.invoke(who, step.agent, step.function, dict(step.args), Caller("sidekick", confirmed=step.confirmed))
    except DreamerError as exc:
        return call | {"ok": False, "error": {"code": exc.code, "message": exc.message},
                       "invocation_id": exc.details.get("invocation_id")}
    return call | {"ok": True, "result": outcome.value, "invocation_id": outcome.invocation_id}
