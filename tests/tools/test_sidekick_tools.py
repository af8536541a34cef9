"""Sidekick's model-driven planner with tool servers: it sees the user's tools and the skills
of the servers in use, calls a tool through the registry, and asks before a destructive one."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernelproc import KernelProc, start_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fakes"))
from llm_server import Call, FakeLLMServer, Text, ToolCalls


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def model_kernel(fake: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    kernel = start_kernel(tmp_path_factory.mktemp("tools-model") / "home", fake.kernel_env())
    yield kernel
    kernel.stop()


def chat(kernel: KernelProc, text: str, *extra: str) -> dict:
    done = kernel.cli("chat", text, "--json", *extra)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def test_the_model_uses_a_tool_with_its_skill_in_view(model_kernel: KernelProc, fake: FakeLLMServer) -> None:
    fake.reset()
    event = {"title": "Dentist", "start": "2026-12-03T09:30:00+00:00"}
    fake.script(ToolCalls([Call("calendar__create_event", event)]), Text("Added the dentist."))
    done = chat(model_kernel, "put the dentist in my calendar on december 3 at 9:30")
    (call,) = done["calls"]
    assert (call["agent"], call["function"], call["ok"]) == ("calendar", "create_event", True)
    request = fake.requests[0].body
    names = {t["function"]["name"] for t in request["tools"]}
    assert {"calendar__create_event", "files__read_file", "web__fetch", "grocery__add_items"} <= names
    system = request["messages"][0]["content"]
    assert "### calendar-events (tool server calendar)" in system and "`calendar.list_events` for the day first" in system
    listed = model_kernel.cli_json("call-tool", "calendar", "list_events")["result"]["events"]
    assert [e["title"] for e in listed] == ["Dentist"]


def test_a_destructive_tool_waits_for_a_yes(model_kernel: KernelProc, fake: FakeLLMServer) -> None:
    fake.reset()
    (event,) = model_kernel.cli_json("call-tool", "calendar", "list_events")["result"]["events"]
    fake.script(ToolCalls([Call("calendar__delete_event", {"uid": event["uid"]})]))
    asked = chat(model_kernel, "delete the dentist", "--new")
    assert asked["calls"] == [] and asked["pending"]["kind"] == "confirm"
    assert model_kernel.cli_json("call-tool", "calendar", "list_events")["result"]["events"]
    approved = chat(model_kernel, "yes")
    assert [(c["function"], c["ok"]) for c in approved["calls"]] == [("delete_event", True)]
    assert model_kernel.cli_json("call-tool", "calendar", "list_events")["result"]["events"] == []
