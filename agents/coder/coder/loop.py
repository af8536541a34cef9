"""The coding loop: the model asks for tools, the agent runs them in its sandbox, until done.

Rules enforced here in code, whatever the model says:
- read-only tools of one turn run in parallel; edits, writes and commands run
  one at a time, in the order asked;
- a file is read before it is edited or overwritten (search and grep do not
  count: the model must see the exact text it replaces);
- three failed attempts at the same lint error (same file, code and message)
  stop the task: the model is going round in circles;
- steps (model turns), tokens and wall time are bounded;
- a long history is compacted into a structured summary (task, decisions,
  files changed, tests, next steps) plus the latest turn;
- nothing is committed or pushed: the toolset has no such tool, and `commit`
  is a separate function that asks the user first.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from . import gitops, lint, todo, toolset
from .files import load_text
from .workspace import ToolError, Workspace

MAX_RESULT_CHARS = 12_000
COMPACT_AT_CHARS = 60_000
LINT_ATTEMPTS = 3

SYSTEM = """You are coder, a careful and fast coding agent working in a repository in a sandbox.
Tools: search (the codebase index), grep, glob, read, edit, write, lint, run, test, diff, todo, finish.
How to work:
- Look before you change: search or grep to find the code, then read the files you will edit.
- Call several read-only tools (read, search, grep, glob, lint, diff) in one turn when you can: they run in parallel.
- Make small exact edits; after each edit you are told the lint errors it introduced. Fix them.
- Run the tests when you have changed code. Call finish with a short summary when the task is done.
- You cannot commit or push; the user does that after reviewing the diff.
Paths are relative to the repository root."""

LlmTurn = Callable[[list[dict[str, Any]], list[dict[str, Any]], str], dict[str, Any]]
Log = Callable[[str], None]


@dataclass
class Limits:
    max_steps: int = 30
    max_tokens: int = 400_000  # input + output over the whole task
    max_seconds: float = 600.0


@dataclass
class Stats:
    steps: int = 0
    tool_calls: int = 0
    parallel_batches: int = 0  # turns whose read-only calls ran together
    input_tokens: int = 0
    output_tokens: int = 0
    compactions: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "tool_calls": self.tool_calls, "parallel_batches": self.parallel_batches,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens, "compactions": self.compactions}


def _clip(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n... [{len(text) - limit} characters left out] ...\n" + text[-half:]


@dataclass
class Task:
    ws: Workspace
    instruction: str
    llm: LlmTurn
    limits: Limits = field(default_factory=Limits)
    log: Log = lambda _message: None
    stats: Stats = field(default_factory=Stats)
    read_paths: set[str] = field(default_factory=set)
    lint_failures: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    baseline: dict[str, str] = field(default_factory=dict)  # each file as this task first saw it
    deadline: float = float("inf")  # time.monotonic() by which the task must answer
    decisions: list[str] = field(default_factory=list)
    last_test: str | None = None

    # -- running tools ----------------------------------------------------------------

    def _guard(self, name: str, args: dict[str, Any]) -> None:
        if name in toolset.CHANGES:
            path = args.get("path")
            real = self.ws.resolve(path if isinstance(path, str) else "")
            rel = self.ws.rel(real)
            if real.exists() and rel not in self.read_paths:
                raise ToolError("read_first", f"read {rel} before you change it, so the edit is made against its current text")

    def _one(self, call: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        name, args = call.get("name", ""), call.get("arguments") or {}
        if call.get("error"):
            return {"error": call["error"]}, False
        if name not in {s["name"] for s in toolset.SPECS}:
            return {"error": f"there is no tool named {name}"}, False
        if name in ("run", "test"):
            # A command may not outlive the task: the invocation would be killed with its answer.
            left = self.deadline - time.monotonic() - 1.0
            if left < 1.0:
                return {"error": "no time is left in this task to run commands; call finish"}, False
            asked = args.get("timeout")
            asked = float(asked) if isinstance(asked, (int, float)) and not isinstance(asked, bool) and asked > 0 else left
            args = {**args, "timeout": min(asked, left)}
        try:
            self._guard(name, args)
            result = toolset.call(self.ws, name, args)
        except ToolError as exc:
            return {"error": exc.message, "code": exc.code}, False
        except TypeError as exc:
            return {"error": f"bad arguments for {name}: {exc}"}, False
        if name == "read":
            self.read_paths.add(result["path"])
            self._keep_baseline(result["path"])
        if name in toolset.CHANGES:
            self.read_paths.add(result["path"])
            self.baseline.setdefault(result["path"], "")  # a file this task created
            self._task_lint(result)
        if name == "test":
            self.last_test = f"{result.get('command')}: {result.get('summary')}"
        return result, True

    def _keep_baseline(self, rel: str) -> None:
        if rel not in self.baseline:
            try:
                self.baseline[rel] = load_text(self.ws, self.ws.resolve(rel))[0]
            except ToolError:
                pass

    def _task_lint(self, result: dict[str, Any]) -> None:
        """Lint feedback against the file as the task first saw it, so an error the task
        introduced is reported again after each attempt that leaves it in place."""
        rel = result["path"]
        try:
            now = load_text(self.ws, self.ws.resolve(rel))[0]
            result["lint"] = {"introduced": (found := lint.introduced(self.ws, rel, self.baseline[rel], now)), "ok": not found}
        except ToolError:
            pass

    def run_calls(self, calls: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any], bool]]:
        """Consecutive read-only calls run together; every other call runs alone, in order."""
        out: list[tuple[dict[str, Any], dict[str, Any], bool]] = []
        batch: list[dict[str, Any]] = []

        def flush() -> None:
            if not batch:
                return
            if len(batch) > 1:
                self.stats.parallel_batches += 1
                with ThreadPoolExecutor(max_workers=min(8, len(batch))) as pool:
                    results = list(pool.map(self._one, batch))
            else:
                results = [self._one(batch[0])]
            out.extend((c, r, ok) for c, (r, ok) in zip(batch, results))
            batch.clear()

        for call in calls:
            if call.get("name") in toolset.READ_ONLY and not call.get("error"):
                batch.append(call)
                continue
            flush()
            result, ok = self._one(call)
            out.append((call, result, ok))
        flush()
        return out

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        started = time.monotonic()
        self.deadline = started + self.limits.max_seconds
        messages: list[dict[str, Any]] = [{"role": "user", "content": self.instruction}]
        status, summary = "max_steps", ""
        while self.stats.steps < self.limits.max_steps:
            if time.monotonic() - started > self.limits.max_seconds:
                status = "out_of_time"
                break
            if self.stats.input_tokens + self.stats.output_tokens >= self.limits.max_tokens:
                status = "out_of_budget"
                break
            if sum(len(json.dumps(m)) for m in messages) > COMPACT_AT_CHARS:
                messages = self.compact(messages)
            turn = self.llm(messages, toolset.SPECS, SYSTEM)
            self.stats.steps += 1
            usage = turn.get("usage") or {}
            self.stats.input_tokens += int(usage.get("input_tokens", 0)) + int(usage.get("cache_read_tokens", 0))
            self.stats.output_tokens += int(usage.get("output_tokens", 0))
            calls = turn.get("tool_calls") or []
            if turn.get("text"):
                self.decisions.append(turn["text"].strip()[:300])
            messages.append({"role": "assistant", "content": turn.get("text") or "",
                             "tool_calls": [{"id": c["id"], "name": c["name"], "arguments": c.get("arguments") or {}} for c in calls]})
            if not calls:
                status, summary = "finished", (turn.get("text") or "").strip()
                break
            self.log(f"step {self.stats.steps}: " + ", ".join(c["name"] for c in calls))
            finished = None
            for call, result, ok in self.run_calls(calls):
                self.stats.tool_calls += 1
                self.stats.calls.append({"step": self.stats.steps, "name": call["name"], "ok": ok})
                if call["name"] == "finish" and ok:
                    finished = result
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": _clip(json.dumps(result)),
                                 "is_error": not ok})
                stuck = self._lint_stuck(call, result)
                if stuck:
                    status, summary = "stuck_on_lint", stuck
            if status == "stuck_on_lint":
                break
            if finished is not None:
                status, summary = "finished", finished.get("summary", "")
                break
        changes = gitops.diff(self.ws)
        self.log(f"{status} after {self.stats.steps} steps, {self.stats.tool_calls} tool calls")
        return {"status": status, "summary": summary, "diff": changes["diff"], "files": changes["files"],
                "stats": {**self.stats.to_dict(), "seconds": round(time.monotonic() - started, 3)},
                "calls": self.stats.calls, "committed": False,
                "next": "review the diff; call commit(message) to commit it (asks you first)" if changes["files"] else None}

    def _lint_stuck(self, call: dict[str, Any], result: dict[str, Any]) -> str | None:
        """Count consecutive changes of a file that leave the same introduced error; three stop the task."""
        if call["name"] not in toolset.CHANGES or "path" not in result:
            return None
        present = {(d["path"], d["code"], d["message"]) for d in (result.get("lint") or {}).get("introduced", [])}
        for key in [k for k in self.lint_failures if k[0] == result["path"] and k not in present]:
            del self.lint_failures[key]  # fixed: the count starts again if it comes back
        for key in sorted(present):
            self.lint_failures[key] += 1
            if self.lint_failures[key] >= LINT_ATTEMPTS:
                return (f"stopped: {LINT_ATTEMPTS} attempts in a row left the same lint error in {key[0]} "
                        f"({key[1]}: {key[2]})")
        return None

    def compact(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A structured summary of the work so far plus the latest assistant turn and its results."""
        self.stats.compactions += 1
        changes = gitops.diff(self.ws)
        summary = {
            "task": self.instruction,
            "decisions": self.decisions[-10:],
            "files_changed": changes["files"],
            "files_read": sorted(self.read_paths),
            "tests": self.last_test or "not run yet",
            "next_steps": [i["text"] for i in todo.load(self.ws) if i.get("status") != "done"] or ["continue the task"],
        }
        # The tail must start at an assistant turn so every tool result keeps its call.
        tail_start = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=len(messages))
        head = {"role": "user", "content": "The conversation so far was compacted. Summary (JSON):\n" + json.dumps(summary, indent=1)}
        self.log("compacted the history")
        return [head, *messages[tail_start:]]
