"""The gateway keeps what each model call asked and answered for the training export
(issue 20): request, response, latency, usage, finish reason and status, for both
providers, answered or failed, and nothing for a user who opted out of export."""

from __future__ import annotations

import pytest
from llm_testkit import FakeLLMServer, gateway_for, run
from llm_server import Fail, Text
from sqlalchemy import select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm.types import ChatRequest, Done, Message
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import ModelRequest, Span
from dreamer.kernel.tracing.export import set_opted_out
from dreamer.kernel.tracing.provider import setup_tracing


def rows(store: Store) -> list[ModelRequest]:
    with store.session() as s:
        found = list(s.query(ModelRequest).order_by(ModelRequest.id))
        s.expunge_all()
        return found


def test_an_answered_call_is_kept_with_its_span(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    tracer = setup_tracing(sqlite_store, batch=False).get_tracer("t")
    gateway = gateway_for(fake, provider, sqlite_store)
    gateway.tracer = tracer
    fake.script(Text("Soup.", input_tokens=21, output_tokens=3))
    request = ChatRequest([Message.user("What is for dinner?")], system="Answer in one word.")
    run(gateway, lambda g: g.complete(request, user_id=user_id, agent="recipes", invocation_id="inv_1"))
    (row,) = rows(sqlite_store)
    assert (row.user_id, row.invocation_id, row.turn_key, row.model, row.provider) == (user_id, "inv_1", None, "medium-1", provider)
    assert row.request["messages"] == [{"role": "system", "content": "Answer in one word."},
                                       {"role": "user", "content": "What is for dinner?"}]
    assert row.request["max_tokens"] == 1024 and "temperature" not in row.request
    assert row.response["choices"][0]["message"] == {"role": "assistant", "content": "Soup."}
    assert (row.status, row.finish_reason, row.usage["input_tokens"], row.usage["output_tokens"]) == ("ok", "end_turn", 21, 3)
    assert row.latency_ms >= 0
    with sqlite_store.session() as s:
        span = s.scalars(select(Span).where(Span.trace_id == row.trace_id, Span.span_id == row.span_id)).one()
        assert span.name == "chat medium-1"


def test_a_streamed_turn_call_is_kept_under_its_turn(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    gateway = gateway_for(fake, "openai", sqlite_store)
    fake.script(Text("Hello there.", input_tokens=5, output_tokens=2))

    async def stream(g: object) -> list[object]:
        return [e async for e in gateway.stream(ChatRequest([Message.user("hi")]), user_id=user_id, turn_key="turn_x")]

    events = run(gateway, stream)
    assert isinstance(events[-1], Done)
    (row,) = rows(sqlite_store)
    assert (row.turn_key, row.invocation_id, row.status) == ("turn_x", None, "ok")
    assert row.response["choices"][0]["message"]["content"] == "Hello there."


def test_a_failed_call_is_kept_as_an_error(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    gateway = gateway_for(fake, "openai", sqlite_store)
    fake.script(Fail(500, "the server broke"))
    with pytest.raises(DreamerError):
        run(gateway, lambda g: g.complete(ChatRequest([Message.user("hi")]), user_id=user_id))
    (row,) = rows(sqlite_store)
    assert row.status == "error" and row.finish_reason is None and row.usage is None
    assert row.response["error"]["code"] and row.request["messages"] == [{"role": "user", "content": "hi"}]


def test_nothing_is_kept_for_a_user_who_opted_out(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    set_opted_out(sqlite_store, user_id, True)
    gateway = gateway_for(fake, "openai", sqlite_store)
    fake.script(Text("Soup."))
    answer = run(gateway, lambda g: g.complete(ChatRequest([Message.user("private")]), user_id=user_id))
    assert answer.text == "Soup." and rows(sqlite_store) == []


def test_a_huge_conversation_keeps_its_newest_messages(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    gateway = gateway_for(fake, "openai", sqlite_store)
    fake.script(Text("ok"))
    history = [Message.user(f"message {i} " + "x" * 10_000) for i in range(40)] + [Message.user("the last one")]
    run(gateway, lambda g: g.complete(ChatRequest(history, system="be brief"), user_id=user_id))
    (row,) = rows(sqlite_store)
    kept = row.request["messages"]
    assert kept[0] == {"role": "system", "content": "be brief"} and kept[-1]["content"] == "the last one"
    assert row.request["dreamer_dropped_messages"] == 41 - (len(kept) - 1) > 0


def test_the_configured_ceiling_caps_every_calls_tokens(fake: FakeLLMServer, provider: str, sqlite_store: Store,
                                                      user_id: int) -> None:
    # `[llm] max_tokens` caps Sidekick's own loop (it asks for 1024) as it caps agents: what reaches the
    # server is the ceiling, and a call asking for less keeps its own number.
    gateway = gateway_for(fake, provider, sqlite_store, max_tokens=40)
    fake.script(Text("Soup.", input_tokens=21, output_tokens=3), Text("Stew.", input_tokens=21, output_tokens=3))
    run(gateway, lambda g: g.complete(ChatRequest([Message.user("What is for dinner?")], max_tokens=1024), user_id=user_id))
    gateway = gateway_for(fake, provider, sqlite_store, max_tokens=40)
    run(gateway, lambda g: g.complete(ChatRequest([Message.user("And tomorrow?")], max_tokens=12), user_id=user_id))
    assert [row.request["max_tokens"] for row in rows(sqlite_store)] == [40, 12]
