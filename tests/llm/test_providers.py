"""Both providers through the real `anthropic` and `openai` client libraries, against
the fake server: text, tool calls, streaming, the wire format, failures."""

from __future__ import annotations

import json
import socket

import pytest
from llm_server import BrokenStream, Call, Delay, Fail, FakeLLMServer, Raw, Text, ToolCalls
from llm_testkit import SECRET, collect, gateway_for, run

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm import ChatRequest, Done, Message, TextDelta, ToolCallEvent, ToolSpec
from dreamer.kernel.store.db import Store

WEATHER = ToolSpec(
    "weather", "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def ask(text: str = "hello", **kwargs: object) -> ChatRequest:
    return ChatRequest(messages=[Message.user(text)], **kwargs)  # type: ignore[arg-type]


def test_text_answer_and_what_went_over_the_wire(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(Text("Hi there.", input_tokens=12, output_tokens=3))
    gw = gateway_for(fake, provider, sqlite_store)
    answer = run(gw, lambda g: g.complete(ask("hello", system="Be brief.", variant="fast", max_tokens=77), user_id=user_id))
    assert (answer.text, answer.tool_calls, answer.stop_reason) == ("Hi there.", [], "end_turn")
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (12, 3)
    assert (answer.model, answer.provider) == ("small-1", provider)

    (sent,) = fake.requests
    assert sent.format == provider and not sent.stream
    assert sent.body["model"] == "small-1"  # the "fast" variant
    if provider == "anthropic":
        assert sent.path == "/v1/messages"
        # The library decides the header (x-api-key, or a Bearer token in newer versions).
        assert SECRET in (sent.headers.get("x-api-key"), sent.headers.get("authorization", "").removeprefix("Bearer "))
        assert sent.headers["anthropic-version"]
        assert sent.body["max_tokens"] == 77
        assert sent.body["system"][0]["text"] == "Be brief."
        assert sent.body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    else:
        assert sent.path == "/v1/chat/completions"
        assert sent.headers["authorization"] == f"Bearer {SECRET}"
        assert sent.body["max_tokens"] == 77  # a compatible server, not api.openai.com
        assert sent.body["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}]


def test_anthropic_marks_system_and_tools_for_prompt_caching(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    other = ToolSpec("clock", "The time.", {"type": "object", "properties": {}})
    fake.script(Text("ok", input_tokens=4, cache_read_tokens=2000, cache_write_tokens=100))
    gw = gateway_for(fake, "anthropic", sqlite_store)
    answer = run(gw, lambda g: g.complete(ask(system="You are Sidekick.", tools=[WEATHER, other]), user_id=user_id))
    body = fake.requests[0].body
    assert body["system"] == [{"type": "text", "text": "You are Sidekick.", "cache_control": {"type": "ephemeral"}}]
    # One breakpoint after the last tool caches all of them; the others carry none.
    assert [t.get("cache_control") for t in body["tools"]] == [None, {"type": "ephemeral"}]
    assert "cache_control" not in json.dumps(body["messages"])
    assert (answer.usage.cache_read_tokens, answer.usage.cache_write_tokens) == (2000, 100)


def test_openai_cached_tokens_are_not_counted_twice(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    fake.script(Text("ok", input_tokens=30, cache_read_tokens=1000, output_tokens=2))
    gw = gateway_for(fake, "openai", sqlite_store)
    usage = run(gw, lambda g: g.complete(ask(), user_id=user_id)).usage
    # prompt_tokens was 1030 on the wire; 1000 of those came from the cache.
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (30, 1000, 2)


def test_tool_calls(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(ToolCalls([Call("weather", {"city": "Oslo"}, id="c1"), Call("weather", {"city": "Rome"}, id="c2")],
                          text="Let me look."))
    gw = gateway_for(fake, provider, sqlite_store)
    answer = run(gw, lambda g: g.complete(ask("weather?", tools=[WEATHER], tool_choice="required"), user_id=user_id))
    assert answer.stop_reason == "tool_use"
    assert [(c.id, c.name, c.arguments, c.error) for c in answer.tool_calls] == [
        ("c1", "weather", {"city": "Oslo"}, None), ("c2", "weather", {"city": "Rome"}, None),
    ]
    assert answer.text == "Let me look."
    body = fake.requests[0].body
    if provider == "anthropic":
        assert body["tools"][0]["input_schema"] == WEATHER.parameters
        assert body["tool_choice"] == {"type": "any"}
    else:
        assert body["tools"] == [{"type": "function", "function": {
            "name": "weather", "description": "The weather in a city.", "parameters": WEATHER.parameters}}]
        assert body["tool_choice"] == "required"


def test_a_conversation_with_tool_results_translates_to_each_format(
    fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int
) -> None:
    fake.script(ToolCalls([Call("weather", {"city": "Oslo"}, id="c1")]), Text("Cold in Oslo."))
    gw = gateway_for(fake, provider, sqlite_store)

    async def conversation(g):
        first = await g.complete(ask("weather in Oslo?", tools=[WEATHER]), user_id=user_id)
        history = [Message.user("weather in Oslo?"), Message.assistant(first.text, first.tool_calls),
                   Message.tool_result("c1", "-3 C"), ]
        return await g.complete(ChatRequest(messages=history, tools=[WEATHER]), user_id=user_id)

    assert run(gw, conversation).text == "Cold in Oslo."
    sent = fake.requests[1].body["messages"]
    if provider == "anthropic":
        assert sent[1] == {"role": "assistant", "content": [
            {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Oslo"}}]}
        assert sent[2] == {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "-3 C", "is_error": False}]}
    else:
        assert sent[1]["tool_calls"] == [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}]
        assert sent[2] == {"role": "tool", "tool_call_id": "c1", "content": "-3 C"}


def test_streaming_text(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(Text("Hello, streaming world.", chunks=["Hello", ", streaming", " world."], input_tokens=9, output_tokens=4))
    gw = gateway_for(fake, provider, sqlite_store)
    events = run(gw, lambda g: collect(g.stream(ask(), user_id=user_id)))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", ", streaming", " world."]
    done = events[-1]
    assert isinstance(done, Done)
    assert done.response.text == "Hello, streaming world."
    assert (done.response.usage.input_tokens, done.response.usage.output_tokens) == (9, 4)
    assert done.response.stop_reason == "end_turn"
    sent = fake.requests[0]
    assert sent.stream
    if provider == "openai":
        assert sent.body["stream_options"] == {"include_usage": True}


def test_streaming_tool_calls(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(ToolCalls([Call("weather", {"city": "Lagos"}, id="t1")], text="Checking."))
    gw = gateway_for(fake, provider, sqlite_store)
    events = run(gw, lambda g: collect(g.stream(ask(tools=[WEATHER]), user_id=user_id)))
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.id, c.name, c.arguments, c.error) for c in calls] == [("t1", "weather", {"city": "Lagos"}, None)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Checking."
    done = events[-1]
    assert isinstance(done, Done) and done.response.stop_reason == "tool_use" and done.response.tool_calls == calls


@pytest.mark.parametrize("streaming", [False, True])
def test_malformed_tool_call_arguments_are_reported_not_raised(
    fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int, streaming: bool
) -> None:
    fake.script(ToolCalls([Call("weather", '{"city": "Oslo"', id="bad"), Call("weather", "[1, 2]", id="list"),
                           Call("teleport", {"to": "Mars"}, id="unknown")]))
    gw = gateway_for(fake, provider, sqlite_store)

    async def go(g):
        if streaming:
            return (await collect(g.stream(ask(tools=[WEATHER]), user_id=user_id)))[-1].response
        return await g.complete(ask(tools=[WEATHER]), user_id=user_id)

    bad, listed, unknown = run(gw, go).tool_calls
    assert bad.arguments == {} and "not valid JSON" in bad.error and bad.raw_arguments == '{"city": "Oslo"'
    assert listed.arguments == {} and listed.error == "the arguments of weather are not a JSON object"
    assert unknown.arguments == {"to": "Mars"} and "not one of the tools it was offered" in unknown.error


@pytest.mark.parametrize(
    ("reply", "code", "words"),
    [
        (Fail(401, "invalid x-api-key", "authentication_error"), "model_error", "refused the API key (401)"),
        (Fail(404, "model: medium-1 not found", "not_found_error"), "model_error", "has no model 'medium-1'"),
        (Fail(429, "rate limited", "rate_limit_error"), "model_error", "rate-limiting"),
        (Fail(500, "boom", "api_error"), "model_error", "failed (500): boom"),
        (Raw("{not json", status=200), "model_error", "malformed"),
    ],
)
def test_provider_failures_are_one_sentence(
    fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int, reply: object, code: str, words: str
) -> None:
    fake.script(reply)
    gw = gateway_for(fake, provider, sqlite_store)
    with pytest.raises(DreamerError) as caught:
        run(gw, lambda g: g.complete(ask(), user_id=user_id))
    assert caught.value.code == code
    assert words in caught.value.message
    assert "\n" not in caught.value.message and SECRET not in caught.value.message
    assert "127.0.0.1" in caught.value.message  # it says which provider


def test_the_key_source_is_named_on_a_refused_key(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(Fail(401, "invalid key", "authentication_error"))
    gw = gateway_for(fake, provider, sqlite_store, api_key_source="ANTHROPIC_API_KEY")
    with pytest.raises(DreamerError, match="check ANTHROPIC_API_KEY$"):
        run(gw, lambda g: g.complete(ask(), user_id=user_id))


def test_a_slow_provider_times_out_with_one_sentence(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(Delay(30, Text("too late")))
    gw = gateway_for(fake, provider, sqlite_store, timeout_s=0.5)
    with pytest.raises(DreamerError) as caught:
        run(gw, lambda g: g.complete(ask(), user_id=user_id))
    assert caught.value.code == "timeout"
    assert caught.value.message == f"the model provider at {fake.url.removeprefix('http://')} did not answer within 0.5 s"


def test_the_invocation_deadline_bounds_the_call(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    fake.script(Delay(30, Text("too late")))
    gw = gateway_for(fake, "openai", sqlite_store, timeout_s=20)
    with pytest.raises(DreamerError) as caught:
        run(gw, lambda g: g.complete(ask(), user_id=user_id, timeout=0.3))
    assert caught.value.code == "timeout" and "time left for this invocation" in caught.value.message


def test_an_unreachable_provider(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gw = gateway_for(fake, provider, sqlite_store, base_url=f"http://127.0.0.1:{port}")
    with pytest.raises(DreamerError) as caught:
        run(gw, lambda g: g.complete(ask(), user_id=user_id))
    assert caught.value.code == "model_error"
    assert caught.value.message.startswith(f"cannot reach the model provider at 127.0.0.1:{port}: ")
    assert "\n" not in caught.value.message


def test_an_error_in_the_middle_of_a_stream(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(BrokenStream("Half an ans", "overloaded right now"))
    gw = gateway_for(fake, provider, sqlite_store)
    seen: list[object] = []

    async def go(g):
        async for event in g.stream(ask(), user_id=user_id):
            seen.append(event)

    with pytest.raises(DreamerError) as caught:
        run(gw, go)
    assert caught.value.code == "model_error" and "overloaded right now" in caught.value.message
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "Half an ans"
    assert not any(isinstance(e, Done) for e in seen)


def test_client_retries_are_configured(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    # An overloaded provider answers 503 once; with one retry the call still succeeds.
    fake.script(Fail(503, "overloaded", "overloaded_error", headers={"retry-after-ms": "10"}), Text("second time"))
    gw = gateway_for(fake, provider, sqlite_store, max_retries=1)
    assert run(gw, lambda g: g.complete(ask(), user_id=user_id)).text == "second time"
    assert len(fake.requests) == 2
