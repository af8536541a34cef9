"""Sidekick with a model: a real kernel whose gateway talks to the fake OpenAI-compatible
server; the model loop's calls of the starter agents run for real in their sandboxes."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fakes"))

from kernelproc import KernelProc, start_kernel
from llm_server import Call, FakeLLMServer, Text, ToolCalls


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def model_kernel(fake: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    kernel = start_kernel(tmp_path_factory.mktemp("chat-model") / "home", fake.kernel_env(api_key="sk-e2e-secret"))
    yield kernel
    kernel.stop()


@pytest.fixture(autouse=True)
def clean_script(fake: FakeLLMServer) -> Iterator[None]:
    fake.reset()
    yield
    assert fake.pending == 0, "a scripted reply was not used"


def chat(kernel: KernelProc, text: str, *extra: str) -> dict:
    done = kernel.cli("chat", text, "--json", *extra)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def grocery_items(kernel: KernelProc) -> str:
    return json.dumps(kernel.cli_json("call", "grocery", "list_items")["result"]).lower()


def test_the_model_adds_items_through_the_kernel(model_kernel: KernelProc, fake: FakeLLMServer) -> None:
    model_kernel.cli_json("call", "grocery", "clear", "--yes")
    fake.script(ToolCalls([Call("grocery__add_items", {"items": ["milk", "eggs"]})]), Text("Added milk and eggs."))
    with model_kernel.client() as c:
        with c.stream("POST", "/v1/chat", json={"message": "we're out of milk and eggs"}) as r:
            lines = [line for line in r.iter_lines() if line.startswith("data:")]
    events = [json.loads(line.split(":", 1)[1]) for line in lines]
    start, done = events[0], events[-1]
    assert start["planner"] == "model"
    (call,) = done["calls"]
    assert (call["agent"], call["function"], call["ok"]) == ("grocery", "add_items", True)
    assert done["reply"] == "Added milk and eggs." and done["pending"] is None
    # The reply reached the stream as the model wrote it, in pieces, and only once.
    deltas = [e["delta"] for e in events if "delta" in e]
    assert len(deltas) > 1 and "".join(deltas) == "Added milk and eggs."
    assert "milk" in grocery_items(model_kernel) and "eggs" in grocery_items(model_kernel)
    # The real result of the sandboxed call went back to the model.
    (tool_message,) = [m for m in fake.requests[1].body["messages"] if m["role"] == "tool"]
    assert "milk" in tool_message["content"].lower()


def test_clear_waits_for_a_yes_that_needs_no_model(model_kernel: KernelProc, fake: FakeLLMServer) -> None:
    model_kernel.cli_json("call", "grocery", "add_items", '{"items": ["tea"]}')
    fake.script(ToolCalls([Call("grocery__clear", {})]))
    asked = chat(model_kernel, "empty my grocery list", "--new")
    assert asked["calls"] == [] and asked["pending"]["kind"] == "confirm"
    assert "tea" in grocery_items(model_kernel)
    approved = chat(model_kernel, "yes")  # answered by dialog.resume: no scripted model reply is used
    assert [(c["function"], c["ok"]) for c in approved["calls"]] == [("clear", True)]
    assert len(fake.requests) == 1
    assert model_kernel.cli_json("call", "grocery", "list_items")["result"]["items"] == []


def test_a_question_of_the_model_is_answered_to_the_model(model_kernel: KernelProc, fake: FakeLLMServer) -> None:
    model_kernel.cli_json("call", "grocery", "clear", "--yes")
    fake.script(ToolCalls([Call("ask_user", {"question": "What should I add?"})]))
    asked = chat(model_kernel, "add something to my list", "--new")
    assert asked["pending"]["kind"] == "missing" and asked["reply"] == "What should I add?"
    fake.script(ToolCalls([Call("grocery__add_items", {"items": ["bread"]})]), Text("Added bread."))
    added = chat(model_kernel, "bread")
    assert [(c["function"], c["ok"]) for c in added["calls"]] == [("add_items", True)]
    assert added["pending"] is None and "bread" in grocery_items(model_kernel)
    sent = fake.requests[1].body["messages"]
    assert [m["content"] for m in sent if m["role"] in ("user", "assistant")][:3] == [
        "add something to my list", "What should I add?", "bread"]


def test_an_empty_model_answer_lets_the_offline_planner_answer(model_kernel: KernelProc, fake: FakeLLMServer) -> None:
    model_kernel.cli_json("call", "grocery", "clear", "--yes")
    fake.script(Text(""))
    done = chat(model_kernel, "add bread to my grocery list", "--new")
    assert done["reply"].startswith("(The model could not help here: the model gave an empty answer.")
    assert "offline planner answered instead" in done["reply"]
    assert [(c["function"], c["ok"]) for c in done["calls"]] == [("add_items", True)]
    assert "bread" in grocery_items(model_kernel)


def test_a_refused_model_call_is_audited(model_kernel: KernelProc, fake: FakeLLMServer) -> None:
    fake.script(ToolCalls([Call("launch_rockets", {})]), Text("I cannot do that."))
    done = chat(model_kernel, "launch the rockets", "--new")
    assert done["calls"] == [] and done["reply"] == "I cannot do that."
    audit = model_kernel.cli_json("audit", "--limit", "20")
    assert any(e["action"] == "sidekick.model_call" and e["target"] == "launch_rockets" and e["decision"] == "deny"
               for e in audit)  # type: ignore[union-attr]
