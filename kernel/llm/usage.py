"""Token and cost accounting, and the per-user monthly budget.

The budget period is the calendar month in UTC: simple to explain ("$4.10 of
your $10 this month") and the same for every user. The check runs before a call
and the cost is known only after it, so concurrent calls of one user can
overshoot the budget by the calls already in flight; the next one is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import func, select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm.config import Price
from dreamer.kernel.llm.types import Usage
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import LlmUsage

MILLION = 1_000_000


def cost_usd(usage: Usage, price: Price) -> float:
    """What a call cost. Cache reads and writes are priced as input when the
    configuration does not say otherwise."""
    cache_read = price.input if price.cache_read is None else price.cache_read
    cache_write = price.input if price.cache_write is None else price.cache_write
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * cache_read
        + usage.cache_write_tokens * cache_write
    ) / MILLION


def month_start(now: datetime) -> datetime:
    now = now.astimezone(timezone.utc)
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_month_start(now: datetime) -> datetime:
    start = month_start(now)
    return start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)


def spent_since(store: Store, user_id: int, since: datetime) -> float:
    with store.session() as s:
        total = s.scalar(
            select(func.coalesce(func.sum(LlmUsage.cost_usd), 0.0)).where(
                LlmUsage.user_id == user_id, LlmUsage.at >= since
            )
        )
    return float(total or 0.0)


def check_budget(store: Store, user_id: int, budget_usd: float | None, now: datetime | None = None) -> float:
    """Refuse with budget_exceeded when the user has spent this month's budget;
    return what they have spent so far."""
    now = now or datetime.now(timezone.utc)
    spent = spent_since(store, user_id, month_start(now))
    if budget_usd is not None and spent >= budget_usd:
        until = next_month_start(now).date().isoformat()
        raise DreamerError(
            "budget_exceeded",
            f"you have used {_usd(spent)} of your {_usd(budget_usd)} monthly model budget; "
            f"raise DREAMER_LLM_BUDGET_USD or wait until {until}",
            spent_usd=round(spent, 6), budget_usd=budget_usd, resets=until,
        )
    return spent


def record(
    store: Store,
    *,
    user_id: int,
    agent: str | None,
    provider: str,
    model: str,
    usage: Usage,
    cost: float,
    invocation_id: str | None = None,
) -> None:
    with store.session() as s:
        s.add(
            LlmUsage(
                user_id=user_id, agent=agent, provider=provider, model=model[:200],
                input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens, cache_write_tokens=usage.cache_write_tokens,
                cost_usd=cost, invocation_id=invocation_id,
            )
        )


@dataclass(frozen=True)
class AgentUsage:
    agent: str | None
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


def usage_by_agent(store: Store, user_id: int, since: datetime) -> list[AgentUsage]:
    """One user's model use since `since`, per agent (None: Sidekick itself)."""
    with store.session() as s:
        rows = s.execute(
            select(
                LlmUsage.agent,
                func.count(LlmUsage.id),
                func.coalesce(func.sum(LlmUsage.input_tokens), 0),
                func.coalesce(func.sum(LlmUsage.output_tokens), 0),
                func.coalesce(func.sum(LlmUsage.cost_usd), 0.0),
            )
            .where(LlmUsage.user_id == user_id, LlmUsage.at >= since)
            .group_by(LlmUsage.agent)
            .order_by(LlmUsage.agent)
        ).all()
    return [AgentUsage(a, int(n), int(i), int(o), float(c)) for a, n, i, o, c in rows]


def _usd(amount: float) -> str:
    # Sub-cent bills (cheap or local models) would all read $0.00.
    return f"${amount:.2f}" if amount == 0 or amount >= 0.01 else f"${amount:.4f}"
