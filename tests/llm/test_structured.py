"""Structured output: JSON that matches a schema, a bounded number of retries, and
how each provider is asked for it."""

from __future__ import annotations

import json

import pytest
from llm_server import Call, Fail, FakeLLMServer, Text, ToolCalls
from llm_testkit import gateway_for, run
from sqlalchemy import select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm import ChatRequest, Message
from dreamer.kernel.llm.providers.anthropic_api import RESPOND_TOOL
from dreamer.kernel.llm.structured import parse_json
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import LlmUsage

RECIPE = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "minutes": {"type": "integer", "minimum": 1}},
    "required": ["title", "minutes"],
    "additionalProperties": False,
}


def answer(provider: str, data: object | str) -> object:
    """How each provider's model hands back a structured answer: Anthropic through
    the forced tool, OpenAI-compatible servers as message text."""
    if provider == "anthropic":
        return ToolCalls([Call(RESPOND_TOOL, data)])
    return Text(data if isinstance(data, str) else json.dumps(data))


def ask(text: str = "a soup recipe") -> ChatRequest:
    return ChatRequest(messages=[Message.user(text)], system="You cook.")


def test_a_valid_first_answer(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(answer(provider, {"title": "Leek soup", "minutes": 30}))
    gw = gateway_for(fake, provider, sqlite_store)
    result = run(gw, lambda g: g.structured(ask(), RECIPE, user_id=user_id, agent="recipes"))
    assert result.data == {"title": "Leek soup", "minutes": 30}
    assert result.attempts == 1
    body = fake.requests[0].body
    if provider == "anthropic":
        assert body["tool_choice"] == {"type": "tool", "name": RESPOND_TOOL}
        assert body["tools"][0]["input_schema"] == RECIPE
        assert body["system"][0]["text"].startswith("You cook.\n\nAnswer with only a JSON value")
    else:
        assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "answer", "schema": RECIPE}}
        assert body["messages"][0]["content"].startswith("You cook.\n\nAnswer with only a JSON value")


def test_an_invalid_answer_is_retried_with_the_validation_error(
    fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int
) -> None:
    fake.script(
        answer(provider, {"title": "Leek soup", "minutes": "half an hour"}),
        answer(provider, {"title": "Leek soup", "minutes": 30}),
    )
    gw = gateway_for(fake, provider, sqlite_store)
    result = run(gw, lambda g: g.structured(ask(), RECIPE, user_id=user_id, agent="recipes"))
    assert result.data == {"title": "Leek soup", "minutes": 30}
    assert result.attempts == 2
    assert result.usage.input_tokens == 20  # both attempts count
    retry = fake.requests[1].body["messages"]
    feedback = retry[-1]
    text = feedback["content"] if provider == "openai" else feedback["content"][0]["text"]
    assert text.startswith("That answer does not match the schema: at minutes: 'half an hour' is not of type 'integer'")
    # The model sees its own wrong answer before the feedback.
    assert "half an hour" in str(retry[-2])
    with sqlite_store.session() as s:
        assert len(s.scalars(select(LlmUsage).where(LlmUsage.agent == "recipes")).all()) == 2


def test_text_that_is_not_json_is_retried(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    fake.script(Text("Sure! Leek soup takes about half an hour."), Text('```json\n{"title": "Leek soup", "minutes": 30}\n```'))
    gw = gateway_for(fake, "openai", sqlite_store)
    result = run(gw, lambda g: g.structured(ask(), RECIPE, user_id=user_id))
    assert result.data == {"title": "Leek soup", "minutes": 30} and result.attempts == 2
    assert "the answer is not JSON" in fake.requests[1].body["messages"][-1]["content"]


def test_retries_are_bounded(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    fake.script(*(answer(provider, {"title": "x"}) for _ in range(5)))
    gw = gateway_for(fake, provider, sqlite_store)
    with pytest.raises(DreamerError) as caught:
        run(gw, lambda g: g.structured(ask(), RECIPE, user_id=user_id, retries=2))
    assert caught.value.code == "model_error"
    assert caught.value.message == (
        "the model gave no answer that matches the schema in 3 attempts; "
        "the last one was wrong at the top level: 'minutes' is a required property"
    )
    assert len(fake.requests) == 3 and fake.pending == 2


def test_a_schema_that_is_not_an_object_is_wrapped(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    schema = {"type": "array", "items": {"type": "string"}, "minItems": 2}
    fake.script(answer(provider, {"value": ["leek", "potato"]}))
    gw = gateway_for(fake, provider, sqlite_store)
    result = run(gw, lambda g: g.structured(ask("ingredients"), schema, user_id=user_id))
    assert result.data == ["leek", "potato"]
    body = fake.requests[0].body
    sent = body["tools"][0]["input_schema"] if provider == "anthropic" else body["response_format"]["json_schema"]["schema"]
    assert sent == {"type": "object", "properties": {"value": schema}, "required": ["value"]}


def test_an_invalid_schema_is_refused_before_any_model_call(fake: FakeLLMServer, provider: str, sqlite_store: Store, user_id: int) -> None:
    gw = gateway_for(fake, provider, sqlite_store)
    with pytest.raises(DreamerError) as caught:
        run(gw, lambda g: g.structured(ask(), {"type": "banana"}, user_id=user_id))
    assert caught.value.code == "invalid_argument"
    assert caught.value.message.startswith("the schema is not a valid JSON schema: ")
    assert fake.requests == []


def test_a_server_without_json_schema_support_is_asked_in_words(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    fake.script(
        Fail(400, "unknown field response_format", "invalid_request_error"),
        Fail(422, "unknown field response_format", "invalid_request_error"),
        Text('{"title": "Leek soup", "minutes": 30}'),
        Text('{"title": "Pea soup", "minutes": 20}'),
    )
    gw = gateway_for(fake, "openai", sqlite_store)

    async def twice(g):
        return [await g.structured(ask(), RECIPE, user_id=user_id), await g.structured(ask(), RECIPE, user_id=user_id)]

    first, second = run(gw, twice)
    assert (first.data["title"], second.data["title"]) == ("Leek soup", "Pea soup")
    # json_schema refused, then llama-cpp-python's json_object-with-schema refused too
    assert fake.requests[0].body["response_format"]["type"] == "json_schema"
    assert fake.requests[1].body["response_format"] == {"type": "json_object", "schema": RECIPE}
    # then never sent again; the schema still travels in the system prompt.
    assert "response_format" not in fake.requests[2].body and "response_format" not in fake.requests[3].body
    assert '"minutes"' in fake.requests[3].body["messages"][0]["content"]


def test_a_server_that_takes_json_object_with_a_schema_keeps_it(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    """llama-cpp-python's server: 422 for json_schema, a grammar-constrained answer for json_object + schema."""
    fake.script(
        Fail(422, "Input should be 'text' or 'json_object'", "invalid_request_error"),
        Text('{"title": "Leek soup", "minutes": 30}'),
        Text('{"title": "Pea soup", "minutes": 20}'),
    )
    gw = gateway_for(fake, "openai", sqlite_store)

    async def twice(g):
        return [await g.structured(ask(), RECIPE, user_id=user_id), await g.structured(ask(), RECIPE, user_id=user_id)]

    first, second = run(gw, twice)
    assert (first.data["title"], second.data["title"]) == ("Leek soup", "Pea soup")
    assert [r.body["response_format"]["type"] for r in fake.requests] == ["json_schema", "json_object", "json_object"]
    assert fake.requests[2].body["response_format"]["schema"] == RECIPE


def test_other_bad_requests_are_not_retried_without_a_schema(fake: FakeLLMServer, sqlite_store: Store, user_id: int) -> None:
    fake.script(Fail(400, "context too long", "invalid_request_error"))
    gw = gateway_for(fake, "openai", sqlite_store)
    with pytest.raises(DreamerError, match=r"rejected the request \(400\): context too long"):
        run(gw, lambda g: g.complete(ask(), user_id=user_id))
    assert len(fake.requests) == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  ```json\n[1, 2]\n```  ', [1, 2]),
        ('Here you go: {"a": {"b": 2}} Hope that helps.', {"a": {"b": 2}}),
        ("42", 42),
    ],
)
def test_parse_json_finds_the_answer(text: str, expected: object) -> None:
    assert parse_json(text) == expected


@pytest.mark.parametrize("text", ["", "no json here", "{broken"])
def test_parse_json_refuses_what_is_not_json(text: str) -> None:
    with pytest.raises(ValueError):
        parse_json(text)
