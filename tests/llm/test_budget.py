"""Token and cost accounting per user and agent, and the per-user monthly budget."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from llm_server import FakeLLMServer, Text
from llm_testkit import add_user, collect, gateway_for, run
from sqlalchemy import select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm import ChatRequest, Done, Message, Price, Usage
from dreamer.kernel.llm.usage import check_budget, cost_usd, month_start, next_month_start, record, usage_by_agent
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import LlmUsage


def ask() -> ChatRequest:
    return ChatRequest(messages=[Message.user("hi")])


def test_cost_from_prices_per_million_tokens() -> None:
    price = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    usage = Usage(input_tokens=1_000_000, output_tokens=200_000, cache_read_tokens=2_000_000, cache_write_tokens=100_000)
    assert cost_usd(usage, price) == pytest.approx(3.0 + 3.0 + 0.6 + 0.375)
    # Unknown cache prices fall back to the input price; an unknown model costs nothing.
    assert cost_usd(Usage(cache_read_tokens=1_000_000), Price(input=2.0)) == pytest.approx(2.0)
    assert cost_usd(usage, Price()) == 0


def test_each_call_is_recorded_for_the_user_and_agent(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(Text("a", input_tokens=1000, output_tokens=100), Text("b", input_tokens=10, output_tokens=1, model="huge-9"),
                Text("c", input_tokens=500, output_tokens=50))
    gw = gateway_for(fake, provider, sqlite_store)

    async def calls(g):
        await g.complete(ask(), user_id=user_id, agent="recipes", invocation_id="inv_1")
        await g.complete(ask(), user_id=user_id, agent="recipes")
        await collect(g.stream(ask(), user_id=user_id))  # Sidekick itself: no agent

    run(gw, calls)
    with sqlite_store.session() as s:
        rows = s.scalars(select(LlmUsage).order_by(LlmUsage.id)).all()
        got = [(r.user_id, r.agent, r.provider, r.model, r.input_tokens, r.output_tokens, r.invocation_id) for r in rows]
        costs = [r.cost_usd for r in rows]
    assert got == [
        (user_id, "recipes", provider, "medium-1", 1000, 100, "inv_1"),
        # An unpriced model still has its tokens counted; it is priced by the name asked for.
        (user_id, "recipes", provider, "huge-9", 10, 1, None),
        (user_id, None, provider, "medium-1", 500, 50, None),
    ]
    assert costs == pytest.approx([(1000 * 2 + 100 * 10) / 1e6, (10 * 2 + 1 * 10) / 1e6, (500 * 2 + 50 * 10) / 1e6])
    by_agent = {u.agent: (u.calls, u.input_tokens) for u in usage_by_agent(sqlite_store, user_id, month_start(datetime.now(timezone.utc)))}
    assert by_agent == {None: (1, 500), "recipes": (2, 1010)}


def test_the_budget_is_enforced_before_the_call(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    # Each answer costs 1000 * $2 / 1M + 100 * $10 / 1M = $0.003.
    fake.script(*(Text("x", input_tokens=1000, output_tokens=100) for _ in range(3)))
    gw = gateway_for(fake, provider, sqlite_store, budget_usd=0.005)

    async def until_refused(g):
        answered = 0
        try:
            while True:
                await g.complete(ask(), user_id=user_id, agent="recipes")
                answered += 1
        except DreamerError as exc:
            return answered, exc

    answered, refusal = run(gw, until_refused)
    assert answered == 2  # $0.003 spent < $0.005, so the second still ran
    assert refusal.code == "budget_exceeded" and refusal.status == 402
    until = next_month_start(datetime.now(timezone.utc)).date().isoformat()
    assert refusal.message == (
        f"you have used $0.0060 of your $0.0050 monthly model budget; raise DREAMER_LLM_BUDGET_USD or wait until {until}"
    )
    assert len(fake.requests) == 2  # the refused call never reached the provider


def test_budgets_are_per_user(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    other = add_user(sqlite_store, "bob")
    record(sqlite_store, user_id=user_id, agent=None, provider="openai", model="medium-1", usage=Usage(), cost=5.0)
    fake.script(Text("fine"))
    gw = gateway_for(fake, "openai", sqlite_store, budget_usd=1.0)
    assert run(gw, lambda g: g.complete(ask(), user_id=other)).text == "fine"
    with pytest.raises(DreamerError) as caught:
        run(gateway_for(fake, "openai", sqlite_store, budget_usd=1.0), lambda g: g.complete(ask(), user_id=user_id))
    assert caught.value.code == "budget_exceeded" and "$5.00 of your $1.00" in caught.value.message


def test_a_zero_budget_refuses_and_unlimited_never_does(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    with pytest.raises(DreamerError) as caught:
        run(gateway_for(fake, "openai", sqlite_store, budget_usd=0.0), lambda g: g.complete(ask(), user_id=user_id))
    assert caught.value.message.startswith("you have used $0.00 of your $0.00 monthly model budget")
    record(sqlite_store, user_id=user_id, agent=None, provider="openai", model="m", usage=Usage(), cost=1e9)
    fake.script(Text("still here"))
    assert run(gateway_for(fake, "openai", sqlite_store, budget_usd=None), lambda g: g.complete(ask(), user_id=user_id)).text == "still here"


def test_only_this_month_counts(store: Store) -> None:
    user = add_user(store)
    now = datetime(2026, 3, 15, 12, 0, tzinfo=timezone.utc)
    for at, cost in ((datetime(2026, 2, 28, 23, 59, tzinfo=timezone.utc), 50.0), (datetime(2026, 3, 1, 0, 0, tzinfo=timezone.utc), 4.0),
                     (now - timedelta(hours=1), 1.5)):
        with store.session() as s:
            s.add(LlmUsage(user_id=user, agent="a", provider="openai", model="m", input_tokens=1, output_tokens=1,
                           cache_read_tokens=0, cache_write_tokens=0, cost_usd=cost, at=at))
    assert check_budget(store, user, 10.0, now=now) == pytest.approx(5.5)
    with pytest.raises(DreamerError) as caught:
        check_budget(store, user, 5.5, now=now)
    assert caught.value.message == (
        "you have used $5.50 of your $5.50 monthly model budget; raise DREAMER_LLM_BUDGET_USD or wait until 2026-04-01"
    )
    assert next_month_start(datetime(2026, 12, 31, 23, 0, tzinfo=timezone.utc)) == datetime(2027, 1, 1, tzinfo=timezone.utc)


def test_a_streamed_answer_is_recorded_when_it_is_done(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(Text("streamed", input_tokens=7, output_tokens=3))
    gw = gateway_for(fake, provider, sqlite_store)
    events = run(gw, lambda g: collect(g.stream(ask(), user_id=user_id, agent="news")))
    assert isinstance(events[-1], Done)
    with sqlite_store.session() as s:
        row = s.scalars(select(LlmUsage)).one()
        assert (row.agent, row.input_tokens, row.output_tokens) == ("news", 7, 3)


def test_usage_rows_go_with_their_user(store: Store) -> None:
    from dreamer.kernel.store.models import User

    user = add_user(store, "gone")
    record(store, user_id=user, agent="a", provider="openai", model="m", usage=Usage(1, 2), cost=0.1)
    with store.session() as s:
        s.delete(s.get(User, user))
    with store.session() as s:
        assert s.scalars(select(LlmUsage)).all() == []
