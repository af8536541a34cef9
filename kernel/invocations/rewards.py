"""The `rewards.emit` syscall: `ctx.emit_reward(value, note)`, how well an invocation went.

An agent judges its own run (the user accepted the plan, the fix passed the tests, the
watched page was found) on a scale from -1 (bad) to 1 (good); the kernel keeps it with the
invocation (source "agent"; the user's own thumbs up/down sit beside it as source "user"),
where `GET /v1/invocations/{id}` and `dreamer logs --run ID` show it, for
evaluating agents over time. It reaches nothing and changes nothing of the user's, so it
needs no grant; the number per invocation is capped so a loop cannot fill the store.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, func, insert, select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.models import Reward
from dreamer.kernel.store.tables import table

if TYPE_CHECKING:
    from dreamer.kernel.invocations.syscalls import SyscallContext

MAX_PER_INVOCATION = 20
MAX_NOTE_CHARS = 500

_REWARDS = table(Reward)


async def rewards_emit(ctx: "SyscallContext", params: dict[str, Any]) -> dict[str, Any]:
    value, note = params.get("value"), params.get("note")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not -1 <= value <= 1:
        raise DreamerError("invalid_argument", "ctx.emit_reward needs a number from -1 (bad) to 1 (good)")
    if note is not None and (not isinstance(note, str) or len(note) > MAX_NOTE_CHARS):
        raise DreamerError("invalid_argument", f"a reward's note is text of at most {MAX_NOTE_CHARS} characters")
    who, agent, invocation_id = ctx.who, ctx.agent, ctx.invocation_id

    def keep(conn: Connection) -> int:
        count = conn.execute(select(func.count()).select_from(_REWARDS).where(
            _REWARDS.c.invocation_id == invocation_id, _REWARDS.c.source == "agent")).scalar_one()
        if count >= MAX_PER_INVOCATION:
            raise DreamerError("conflict", f"an invocation keeps at most {MAX_PER_INVOCATION} rewards")
        row = conn.execute(insert(_REWARDS).values(
            invocation_id=invocation_id, user_id=who.user_id, agent=agent, value=float(value), note=note, source="agent",
        ).returning(_REWARDS.c.id)).scalar_one()
        return int(row)

    return {"id": await ctx.invoker.writer.write(keep)}


def rewards_of(session: Any, invocation_id: str) -> list[dict[str, Any]]:
    rows = session.execute(
        select(_REWARDS.c.value, _REWARDS.c.note, _REWARDS.c.source, _REWARDS.c.created_at)
        .where(_REWARDS.c.invocation_id == invocation_id).order_by(_REWARDS.c.id)
    )
    # source: "agent" (ctx.emit_reward) or "user" (a thumbs up/down, kernel/feedback/ratings.py).
    return [{"value": r.value, "note": r.note, "source": r.source, "at": r.created_at.isoformat()} for r in rows]
