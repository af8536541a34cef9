"""One planned step run as Sidekick: through the kernel, so it is checked and audited."""

from __future__ import annotations

from typing import Any

from dreamer.kernel.errors import DreamerError
from dreamer.kernel.invocations.service import Caller, Invoker, Principal
from dreamer.sidekick.planner import Step


async def run_step(invoker: Invoker, who: Principal, step: Step) -> dict[str, Any]:
    """The call as the chat stream and a task report it: args, ok, result or error, invocation id."""
    call: dict[str, Any] = {"agent": step.agent, "function": step.function, "args": dict(step.args)}
    try:
        outcome = await invoker.invoke(who, step.agent, step.function, dict(step.args), Caller("sidekick"))
    except DreamerError as exc:
        return call | {"ok": False, "error": {"code": exc.code, "message": exc.message},
                       "invocation_id": exc.details.get("invocation_id")}
    return call | {"ok": True, "result": outcome.value, "invocation_id": outcome.invocation_id}
