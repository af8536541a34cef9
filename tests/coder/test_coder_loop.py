"""The coding loop in-process with a scripted model: parallel reads, read before edit,
the lint stop, compaction, and the step bound."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from dreamer.agents.coder.coder import loop


class Script:
    """A model that answers with the given turns, recording what it was sent."""

    def __init__(self, *turns: list[tuple[str, dict[str, Any]]] | str) -> None:
        self.turns = list(turns)
        self.sent: list[list[dict[str, Any]]] = []

    def __call__(self, messages, specs, system) -> dict[str, Any]:
        self.sent.append([dict(m) for m in messages])
        turn = self.turns.pop(0)
        usage = {"input_tokens": 100, "output_tokens": 10}
        if isinstance(turn, str):
            return {"text": turn, "tool_calls": [], "usage": usage}
        calls = [{"id": f"c{len(self.sent)}_{i}", "name": n, "arguments": a} for i, (n, a) in enumerate(turn)]
        return {"text": "", "tool_calls": calls, "usage": usage}


def results(sent: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in sent if m["role"] == "tool"]


def test_a_scripted_fix_reads_in_parallel_then_edits_tests_and_finishes(repo: Path, workspace_env, monkeypatch) -> None:
    ws = workspace_env(repo)
    from dreamer.agents.coder.coder import toolset

    # Prove the two reads overlap: each waits until both have started.
    started, both = [], threading.Event()
    real = toolset.call

    def slow(ws_, name, args):
        if name == "read":
            started.append(name)
            if len(started) >= 2:
                both.set()
            both.wait(5)
        return real(ws_, name, args)

    monkeypatch.setattr(toolset, "call", slow)
    model = Script(
        [("search", {"query": "add"}), ("read", {"path": "calc.py"}), ("read", {"path": "test_calc.py"})],
        [("edit", {"path": "calc.py", "old": "return a - b", "new": "return a + b"})],
        [("test", {})],
        [("finish", {"summary": "add subtracted; it adds now"})],
    )
    out = loop.Task(ws, "make the tests pass", model).run()
    assert out["status"] == "finished" and out["summary"] == "add subtracted; it adds now"
    assert both.is_set() and out["stats"]["parallel_batches"] == 1
    assert out["stats"]["steps"] == 4 and out["stats"]["tool_calls"] == 6
    assert out["stats"]["input_tokens"] == 400 and out["files"] == ["calc.py"] and out["committed"] is False
    assert '"passed": true' in results(model.sent[3])[-1]
    assert "+    return a + b" in out["diff"]


def test_an_edit_before_a_read_is_refused_and_the_model_is_told(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo)
    model = Script([("edit", {"path": "calc.py", "old": "a - b", "new": "a + b"})], "I will read it first next time.")
    out = loop.Task(ws, "fix add", model).run()
    assert "read calc.py before you change it" in results(model.sent[1])[0]
    assert out["files"] == [] and "a - b" in (repo / "calc.py").read_text()


def test_three_failed_attempts_at_one_lint_error_stop_the_task(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo)
    model = Script(
        [("read", {"path": "calc.py"})],
        [("edit", {"path": "calc.py", "old": "return a - b", "new": "return a + c"})],
        [("edit", {"path": "calc.py", "old": "return a + c", "new": "return c + a"})],
        [("edit", {"path": "calc.py", "old": "return c + a", "new": "return (c + a)"})],
        [("finish", {"summary": "never reached"})],
    )
    out = loop.Task(ws, "fix add", model).run()
    assert out["status"] == "stuck_on_lint" and "F821" in out["summary"] and len(model.turns) == 1
    assert "Undefined name `c`" in results(model.sent[2])[-1] and "Undefined name `c`" in results(model.sent[3])[-1]


def test_steps_and_tokens_are_bounded(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo)
    model = Script(*[[("glob", {"pattern": "*.py"})]] * 5)
    out = loop.Task(ws, "look around", model, loop.Limits(max_steps=3)).run()
    assert out["status"] == "max_steps" and out["stats"]["steps"] == 3
    model = Script(*[[("glob", {"pattern": "*.py"})]] * 5)
    out = loop.Task(ws, "look around", model, loop.Limits(max_tokens=200)).run()
    assert out["status"] == "out_of_budget" and out["stats"]["steps"] == 2


def test_a_long_history_is_compacted_into_a_structured_summary(repo: Path, workspace_env, monkeypatch) -> None:
    ws = workspace_env(repo)
    monkeypatch.setattr(loop, "COMPACT_AT_CHARS", 2000)
    (repo / "big.py").write_text("".join(f"VALUE_{i} = {i}\n" for i in range(200)))
    model = Script(
        [("read", {"path": "big.py"})],
        [("read", {"path": "calc.py"})],
        [("edit", {"path": "calc.py", "old": "a - b", "new": "a + b"})],
        "done",
    )
    out = loop.Task(ws, "fix add", model).run()
    assert out["stats"]["compactions"] >= 1 and out["status"] == "finished"
    head = model.sent[-1][0]["content"]
    assert head.startswith("The conversation so far was compacted")
    for key in ('"task": "fix add"', '"files_changed"', '"tests"', '"next_steps"', '"decisions"'):
        assert key in head
    # The tail still pairs every tool result with its call.
    calls = {c["id"] for m in model.sent[-1] if m["role"] == "assistant" for c in m["tool_calls"]}
    assert all(m["tool_call_id"] in calls for m in model.sent[-1] if m["role"] == "tool")


def test_a_tool_error_goes_back_to_the_model_as_an_error(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo)
    model = Script([("read", {"path": "../../etc/passwd"}), ("nope", {}), ("read", {"path": 3})], "ok")
    started = time.monotonic()
    loop.Task(ws, "x", model).run()
    assert time.monotonic() - started < 60
    sent = [m for m in model.sent[1] if m["role"] == "tool"]
    assert all(m["is_error"] for m in sent)
    assert "outside the workspace" in sent[0]["content"] and "no tool named nope" in sent[1]["content"]


def test_commands_may_not_outlive_the_task(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo)
    model = Script([("run", {"cmd": "sleep 30; echo late", "timeout": 600})], "gave up")
    started = time.monotonic()
    out = loop.Task(ws, "wait", model, loop.Limits(max_seconds=3)).run()
    assert time.monotonic() - started < 15
    ran = results(model.sent[1])[0]
    assert '"timed_out": true' in ran and "late" not in ran and out["status"] == "finished"


def test_parallel_searches_share_one_index(repo: Path, workspace_env) -> None:
    ws = workspace_env(repo)
    model = Script([("search", {"query": "add"}), ("search", {"query": "mul"}), ("search", {"query": "test"})], "ok")
    loop.Task(ws, "look", model).run()
    sent = [m for m in model.sent[1] if m["role"] == "tool"]
    assert not any(m["is_error"] for m in sent) and '"name": "mul"' in sent[1]["content"]
