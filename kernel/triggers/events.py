"""The `events.emit` syscall: an agent's declared event sets off its subscribers.

params {"event": "article.saved", "data": JSON}. The event must be one the agent
declares (`events:` in agent.yaml). Each agent of the same user with an `event`
trigger on `<agent>.<event>` gets a background invocation (its `schedule` grant is
checked and audited); result {"invocations": [ids]}. Events that set off events
carry a depth, and a chain deeper than MAX_EVENT_DEPTH is refused as a loop; all the
runs one chain sets off share a budget of MAX_CHAIN_RUNS (kernel/triggers/chains.py).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.models import Invocation
from dreamer.contracts.triggers import check_event
from dreamer.kernel.triggers.manager import MAX_EVENT_DEPTH

if TYPE_CHECKING:
    from dreamer.kernel.invocations.syscalls import SyscallContext

MAX_DATA_BYTES = 256 * 1024


async def events_emit(ctx: "SyscallContext", params: dict[str, Any]) -> dict[str, Any]:
    name, data = params.get("event"), params.get("data")
    try:
        check_event(name, qualified=False)
    except ValueError as exc:
        raise DreamerError("invalid_argument", f"ctx.emit_event: {exc}") from None
    if len(json.dumps(data, ensure_ascii=False).encode("utf-8", "surrogatepass")) > MAX_DATA_BYTES:
        raise DreamerError("payload_too_large", f"ctx.emit_event: the data is larger than {MAX_DATA_BYTES // 1024} KiB as JSON")
    installed = ctx.invoker.cache.agent(ctx.who.user_id, ctx.agent)
    declared = installed.manifest.events if installed else []
    if name not in declared:
        raise DreamerError(
            "invalid_argument",
            f"{ctx.agent} does not declare the event {name!r}; list it under 'events:' in agent.yaml to emit it",
        )
    with ctx.invoker.store.session() as s:
        row = s.get(Invocation, ctx.invocation_id)
        fired_by = (row.trigger if row else None) or {}
        depth = int(fired_by.get("depth", 0))
    if depth >= MAX_EVENT_DEPTH:
        raise DreamerError("depth_exceeded", f"event {ctx.agent}.{name} refused: events set each other off {depth} deep")
    # The chain is named by the invocation that started it; every run it sets off counts
    # against one budget, however wide it fans out (depth alone bounds only its length).
    chain = str(fired_by.get("chain") or ctx.invocation_id)
    qualified = f"{ctx.agent}.{name}"
    triggers = ctx.invoker.kernel.triggers
    started: list[str] = []
    refused: list[str] = []
    for sub in triggers.subscribers(ctx.who.user_id, qualified):
        payload = {"event": qualified, "agent": ctx.agent, "data": data}
        try:
            outcome = await triggers.fire(sub, payload, depth=depth + 1, parent_id=ctx.invocation_id, chain=chain)
        except DreamerError as exc:
            refused.append(f"{sub.agent}: {exc.code}")
            continue
        started.append(outcome.invocation_id)
    ctx.record(action="events.emit", target=qualified, detail={"invocations": started, "refused": refused})
    return {"invocations": started}
