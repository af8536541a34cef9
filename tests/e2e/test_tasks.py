"""Sidekick tasks: an agent hands Sidekick a job over its own functions and hears back in a handler."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from kernelproc import KernelProc, start_kernel, write_bundle

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
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("tasks") / "home")
    root = tmp_path_factory.mktemp("tasks-bundles")
    try:
        for name, scopes in (("jotter", ["llm"]), ("stranger", [])):
            done = k.cli("install", str(write_bundle(root, name, AGENT, required=scopes)), "--yes")
            assert done.returncode == 0, done.stderr
        yield k
    finally:
        k.stop()


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


def test_a_task_calls_the_agents_own_function_and_reports_back(kernel: KernelProc) -> None:
    started = call(kernel, "jotter", "start", {"prompt": "jot down buy oat milk", "tools": ["jot"]})
    task_id = started["result"]
    assert task_id.startswith("task_")
    seen = outcomes(kernel, "jotter", 1)
    assert seen["notes"] == ["buy oat milk"]
    (outcome,) = seen["outcomes"]
    assert outcome["task_id"] == task_id and outcome["ok"] is True and outcome["needs_user"] is None
    assert [(c["agent"], c["function"], c["args"]) for c in outcome["calls"]] == [("jotter", "jot", {"text": "buy oat milk"})]
    # The call ran as Sidekick, and the task's start and end are in the audit log.
    entries = kernel.cli_json("audit", "--limit", "100")
    actions = {(e["action"], e["decision"]) for e in entries if task_id in e["target"] or e["action"] == "tasks.create"}
    assert ("tasks.create", "allow") in actions and ("tasks.done", "allow") in actions
    assert any(e["action"] == "functions.call" and e["target"] == "jotter.jot" and e["actor"].startswith("sidekick")
               for e in entries)


def test_a_confirm_function_waits_for_the_user_and_is_not_run(kernel: KernelProc) -> None:
    before = call(kernel, "jotter", "report", {})["result"]
    call(kernel, "jotter", "start", {"prompt": "wipe my notes", "tools": ["wipe"]})
    seen = outcomes(kernel, "jotter", len(before["outcomes"]) + 1)
    outcome = seen["outcomes"][-1]
    assert outcome["ok"] is False and "confirm" in outcome["needs_user"].lower()
    assert seen["notes"] == before["notes"]  # nothing was wiped


def test_refusals_are_one_sentence(kernel: KernelProc) -> None:
    no_grant = call(kernel, "stranger", "start", {"prompt": "jot down x"})
    assert no_grant["error"]["code"] == "permission_denied" and "llm" in no_grant["error"]["message"]
    other = call(kernel, "jotter", "start", {"prompt": "jot down x", "tools": ["stranger.jot"]})
    assert other["error"]["code"] == "invalid_argument" and "own exported functions" in other["error"]["message"]
    hidden = call(kernel, "jotter", "start", {"prompt": "report", "tools": ["report"]})
    assert hidden["error"]["code"] == "invalid_argument"
    for error in (no_grant["error"], other["error"], hidden["error"]):
        assert "\n" not in error["message"]
