"""With a model configured, Sidekick keeps the same dialogue: the model reads each result in the
sentence the user would see, and "undo that" runs the declared inverse without asking the model."""

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
    kernel = start_kernel(tmp_path_factory.mktemp("chat-model-dialogue") / "home", fake.kernel_env(), wait_s=300)
    yield kernel
    kernel.stop()


def say(kernel: KernelProc, text: str, conversation: str | None = None) -> dict:
    with kernel.client() as c:
        out = c.post("/v1/chat", json={"message": text, "conversation_id": conversation, "stream": False}, timeout=120)
    assert out.status_code == 200, out.text
    return out.json()


def test_the_model_sees_the_reply_sentence_and_undo_needs_no_model(model_kernel: KernelProc, fake: FakeLLMServer) -> None:
    fake.reset()
    fake.script(ToolCalls([Call("grocery__add_items", {"items": ["figs"]})]), Text("Figs are on your list."))
    first = say(model_kernel, "we need figs")
    assert [c["function"] for c in first["calls"]] == ["add_items"] and fake.pending == 0
    told = json.dumps(fake.requests[-1].body)
    assert "reads as: Added figs to your grocery list." in told
    asked = len(fake.requests)
    undone = say(model_kernel, "undo that", first["conversation_id"])
    assert [(c["function"], c["args"]) for c in undone["calls"]] == [("remove_items", {"items": ["figs"]})]
    assert undone["reply"].startswith("Undone. Removed figs from your grocery list.")
    assert len(fake.requests) == asked  # the model was not asked
    thanks = say(model_kernel, "thanks!", first["conversation_id"])
    assert thanks["calls"] == [] and thanks["reply"] == "You're welcome!" and len(fake.requests) == asked
