"""Sidekick tasks: an agent hands Sidekick a job, the model works over the agent's own
functions (the fake OpenAI-compatible server plays the model), and a handler hears back."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fakes"))

from kernelproc import KernelProc, start_kernel, write_bundle
from llm_server import Call, FakeLLMServer, Text, ToolCalls

AGENT = '''
from dreamer.sdk import Context, function

def _db(ctx):
    ctx.db.execute("CREATE TABLE IF NOT EXISTS notes (text TEXT)")
    ctx.db.execute("CREATE TABLE IF NOT EXISTS outcomes (body TEXT)")
    return ctx.db

@function(exported=True, examples=["jot down {text}"])
def jot(ctx: Context, text: str) -> dict:
    """Keep a note."""
    _db(ctx).execute("INSERT INTO notes VALUES (?)", (text,))
    return {"kept": text}

@function(exported=True, confirm=True, examples=["wipe my notes"])
def wipe(ctx: Context) -> dict:
    """Delete every note."""
    _db(ctx).execute("DELETE FROM notes")
    return {"wiped": True}

@function
def start(ctx: Context, prompt: str, tools: list[str] | None = None) -> str:
    """Hand Sidekick a job; done() hears how it went."""
    return ctx.task(prompt, tools=tools, on_complete="done")

@function
def done(ctx: Context, outcome: dict) -> None:
    """Called by the kernel when a task ends."""
    _db(ctx).execute("INSERT INTO outcomes VALUES (?)", (json.dumps(outcome),))

@function
def report(ctx: Context) -> dict:
    db = _db(ctx)
    return {"notes": [r[0] for r in db.execute("SELECT text FROM notes")],
            "outcomes": [json.loads(r[0]) for r in db.execute("SELECT body FROM outcomes")]}
'''.replace("from dreamer.sdk", "import json\nfrom dreamer.sdk")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


def install(k: KernelProc, root: Path) -> None:
    for name, scopes in (("jotter", ["llm"]), ("stranger", [])):
        done = k.cli("install", str(write_bundle(root, name, AGENT, required=scopes)), "--yes")
        assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def kernel(fake: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("tasks") / "home", fake.kernel_env(api_key="sk-tasks"))
    root = tmp_path_factory.mktemp("tasks-bundles")
    try:
        install(k, root)
        yield k
    finally:
        k.stop()


@pytest.fixture(scope="module")
def offline_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("tasks-offline") / "home")
    try:
        install(k, tmp_path_factory.mktemp("tasks-offline-bundles"))
        yield k
    finally:
        k.stop()


@pytest.fixture(autouse=True)
def clean_script(fake: FakeLLMServer) -> Iterator[None]:
    fake.reset()
    yield
    assert fake.pending == 0, "a scripted reply was not used"


def call(kernel: KernelProc, agent: str, function: str, args: dict) -> dict:
    with kernel.client() as c:
        return c.post(f"/v1/agents/{agent}/functions/{function}", json={"args": args}).json()


def outcomes(kernel: KernelProc, agent: str, count: int) -> dict:
    deadline = time.monotonic() + 60
    while True:
        seen = call(kernel, agent, "report", {})["result"]
        if len(seen["outcomes"]) >= count or time.monotonic() > deadline:
            return seen
        time.sleep(0.2)


def test_a_task_calls_the_agents_own_function_and_reports_back(kernel: KernelProc, fake: FakeLLMServer) -> None:
    fake.script(ToolCalls([Call("jotter__jot", {"text": "buy oat milk"})]), Text("Jotted it down."))
    task_id = call(kernel, "jotter", "start", {"prompt": "remember to buy oat milk"})["result"]
    assert task_id.startswith("task_")
    seen = outcomes(kernel, "jotter", 1)
    assert seen["notes"] == ["buy oat milk"]
    (outcome,) = seen["outcomes"]
    assert outcome["task_id"] == task_id and outcome["ok"] is True and outcome["needs_user"] is None
    assert outcome["reply"] == "Jotted it down."
    assert [(c["agent"], c["function"], c["args"]) for c in outcome["calls"]] == [("jotter", "jot", {"text": "buy oat milk"})]
    # The model was offered the agent's own exported functions, and nothing of other agents'.
    offered = {t["function"]["name"] for t in fake.requests[0].body["tools"]}
    assert {"jotter__jot", "jotter__wipe"} <= offered and not any(n.startswith("stranger__") for n in offered)
    assert not any(n.startswith("grocery__") for n in offered)
    # The call ran as Sidekick, and the task's start and end are in the audit log.
    entries = kernel.cli_json("audit", "--limit", "100")
    assert any(e["action"] == "tasks.create" and e["decision"] == "allow" for e in entries)
    assert any(e["action"] == "tasks.done" and e["target"] == task_id for e in entries)
    assert any(e["action"] == "functions.call" and e["target"] == "jotter.jot" and e["actor"].startswith("sidekick")
               for e in entries)


def test_a_confirm_function_waits_for_the_user_and_is_not_run(kernel: KernelProc, fake: FakeLLMServer) -> None:
    before = call(kernel, "jotter", "report", {})["result"]
    fake.script(ToolCalls([Call("jotter__wipe", {})]))
    call(kernel, "jotter", "start", {"prompt": "wipe my notes"})
    seen = outcomes(kernel, "jotter", len(before["outcomes"]) + 1)
    outcome = seen["outcomes"][-1]
    assert outcome["ok"] is False and "go ahead" in outcome["needs_user"].lower()
    assert seen["notes"] == before["notes"]  # nothing was wiped


def test_refusals_are_one_sentence(kernel: KernelProc, offline_kernel: KernelProc) -> None:
    no_grant = call(kernel, "stranger", "start", {"prompt": "jot down x"})
    assert no_grant["error"]["code"] == "permission_denied" and "llm" in no_grant["error"]["message"]
    tool = call(kernel, "jotter", "start", {"prompt": "look it up", "tools": ["files.search"]})
    assert tool["error"]["code"] == "permission_denied" and "tool:files.search" in tool["error"]["message"]
    odd = call(kernel, "jotter", "start", {"prompt": "x", "tools": ["not a tool name"]})
    assert odd["error"]["code"] == "invalid_argument"
    no_model = call(offline_kernel, "jotter", "start", {"prompt": "jot down x"})
    assert no_model["error"]["code"] == "not_available" and "model" in no_model["error"]["message"]
    for error in (no_grant["error"], tool["error"], odd["error"], no_model["error"]):
        assert "\n" not in error["message"]
