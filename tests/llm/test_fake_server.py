"""The fake provider itself: what a test gets when it scripts too little, and a
responder that answers by looking at the request."""

from __future__ import annotations

import httpx
import pytest
from llm_server import FakeLLMServer, Recorded, Text
from llm_testkit import gateway_for, run

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm import ChatRequest, Message
from dreamer.kernel.store.db import Store


def test_an_unscripted_request_fails_loudly(fake: FakeLLMServer) -> None:
    answer = httpx.post(f"{fake.openai_url}/chat/completions", json={"model": "m", "messages": []})
    assert answer.status_code == 500
    assert answer.json()["error"]["message"] == "the fake server has no scripted reply left"
    assert httpx.post(f"{fake.url}/v1/other", json={}).status_code == 404


def test_a_responder_answers_from_the_request(provider: str, sqlite_store: Store, user_id: int) -> None:
    def echo(request: Recorded) -> Text:
        last = request.body["messages"][-1]["content"]
        return Text(f"you said {last if isinstance(last, str) else last[0]['text']}")

    with FakeLLMServer(responder=echo) as fake:
        gw = gateway_for(fake, provider, sqlite_store)

        async def two(g):
            return [(await g.complete(ChatRequest([Message.user(t)]), user_id=user_id)).text for t in ("a", "b")]

        assert run(gw, two) == ["you said a", "you said b"]


def test_scripted_replies_come_before_the_responder(sqlite_store: Store, user_id: int) -> None:
    with FakeLLMServer(responder=lambda r: Text("from responder")) as fake:
        fake.script(Text("scripted"))
        gw = gateway_for(fake, "openai", sqlite_store)

        async def two(g):
            return [(await g.complete(ChatRequest([Message.user("x")]), user_id=user_id)).text for _ in range(2)]

        assert run(gw, two) == ["scripted", "from responder"]
    # Stopped at the end of the block: nothing listens any more.
    with pytest.raises(DreamerError) as caught:
        run(gateway_for(fake, "openai", sqlite_store), lambda g: g.complete(ChatRequest([Message.user("x")]), user_id=user_id))
    assert caught.value.code == "model_error" and caught.value.message.startswith("cannot reach the model provider")
