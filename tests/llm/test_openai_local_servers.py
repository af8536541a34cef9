"""What the OpenAI-compatible provider does for servers that differ from OpenAI, as
llama-cpp-python's does (tests/llm_local meets the real one; this is the same against
the fake, fast and exact): tool_choice said out loud, no null content, a server that
cannot stream tool calls, a stream without token counts."""

from __future__ import annotations

from llm_server import Call, FakeLLMServer, Raw, Text, ToolCalls
from llm_testkit import collect, gateway_for, run

from dreamer.kernel.llm import ChatRequest, Done, Message, TextDelta, ToolCall, ToolCallEvent, ToolSpec
from dreamer.kernel.store.db import Store

WEATHER = ToolSpec("weather", "The weather in a city.",
                   {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
# llama-cpp-python's answer when the model picks a tool in a stream: HTTP 200, then nothing.
EMPTY_STREAM = Raw(b"", content_type="text/event-stream")
NO_USAGE_STREAM = Raw(
    b'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": '
    b'[{"index": 0, "delta": {"role": "assistant", "content": "Hello there, friend."}, "finish_reason": null}]}\n\n'
    b'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": '
    b'[{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n',
    content_type="text/event-stream",
)


def test_tools_go_with_tool_choice_auto_and_tool_turns_with_string_content(
    fake: FakeLLMServer, sqlite_store: Store, user_id: int
) -> None:
    fake.script(Text("Cold."))
    gw = gateway_for(fake, "openai", sqlite_store)
    history = [Message.user("weather in Oslo?"), Message.assistant("", [ToolCall("c1", "weather", {"city": "Oslo"})]),
               Message.tool_result("c1", "-3 C")]
    run(gw, lambda g: g.complete(ChatRequest(history, tools=[WEATHER]), user_id=user_id))
    body = fake.requests[0].body
    assert body["tool_choice"] == "auto"
    assert body["messages"][1]["content"] == ""  # not null, not absent


def test_a_server_that_cannot_stream_tool_calls_is_asked_for_whole_answers(
    fake: FakeLLMServer, sqlite_store: Store, user_id: int
) -> None:
    fake.script(EMPTY_STREAM, ToolCalls([Call("weather", {"city": "Lagos"}, id="t1")], input_tokens=30, output_tokens=7),
                Text("Warm in Lagos.", input_tokens=40, output_tokens=4))
    gw = gateway_for(fake, "openai", sqlite_store)

    async def twice(g):
        first = await collect(g.stream(ChatRequest([Message.user("weather in Lagos?")], tools=[WEATHER]), user_id=user_id))
        second = await collect(g.stream(ChatRequest([Message.user("and now?")], tools=[WEATHER]), user_id=user_id))
        return first, second

    first, second = run(gw, twice)
    calls = [e.call for e in first if isinstance(e, ToolCallEvent)]
    assert [(c.name, c.arguments) for c in calls] == [("weather", {"city": "Lagos"})]
    assert isinstance(first[-1], Done) and first[-1].response.usage.input_tokens == 30
    # The second request with tools went whole at once; its text came as one delta.
    assert [r.stream for r in fake.requests] == [True, False, False]
    assert [e.text for e in second if isinstance(e, TextDelta)] == ["Warm in Lagos."]


def test_a_stream_without_token_counts_is_estimated_not_free(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    fake.script(NO_USAGE_STREAM)
    gw = gateway_for(fake, "openai", sqlite_store)
    events = run(gw, lambda g: collect(g.stream(ChatRequest([Message.user("Say hello to my friend, please.")]),
                                                user_id=user_id)))
    done = events[-1]
    assert isinstance(done, Done) and done.response.text == "Hello there, friend."
    assert done.response.usage.input_tokens > 0 and done.response.usage.output_tokens > 0
