"""The `tools.call` and `tools.list` syscalls: an agent's way to its user's tools.

`tools.call` needs a `tool:<server>[.<tool>]` grant held by the calling agent; the
registry checks it (with the tool's on/off switch and the input schema) and writes one
audit entry per call. `tools.list` shows the agent only the tools it may call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.permissions.gate import decide
from dreamer.kernel.tools.naming import qualified, split
from dreamer.kernel.tools.registry import Caller, ToolRegistry

if TYPE_CHECKING:
    from dreamer.kernel.invocations.syscalls import SyscallContext


def _registry(ctx: SyscallContext) -> ToolRegistry:
    registry = ctx.invoker.tools
    if registry is None:
        raise DreamerError("not_available", "this kernel has no tool registry")
    return registry


async def tools_call(ctx: SyscallContext, params: dict[str, Any]) -> dict[str, Any]:
    name, args = params.get("tool"), params.get("args", {})
    if args is None:
        args = {}
    caller = Caller(
        actor=f"agent:{ctx.agent}", agent=ctx.agent, invocation_id=ctx.invocation_id,
        deadline=ctx.caller.deadline, syscall=ctx,
    )
    # split() turns a name that is not server.tool (or not a string) into invalid_argument.
    value = await _registry(ctx).call(ctx.who.user_id, ctx.who.user_name, qualified(*split(name)), args, caller)
    return {"value": value}


async def tools_list(ctx: SyscallContext, params: dict[str, Any]) -> dict[str, Any]:
    registry = _registry(ctx)
    grants = ctx.invoker.cache.grants(ctx.who.user_id, ctx.agent)
    found = []
    for inst in registry.installed_all(ctx.who.user_id):
        for tool in inst.tools:
            name = qualified(inst.server, tool["name"])
            if not decide(grants, ctx.agent, f"tool:{name}").allowed:
                continue
            found.append({
                "name": name, "description": tool.get("description", ""), "input_schema": tool.get("input_schema", {}),
                "annotations": tool.get("annotations", {}), "enabled": tool["name"] not in inst.disabled,
            })
    return {"tools": found}
