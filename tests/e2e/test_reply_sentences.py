"""Every starter function's reply, and an error of each, read as sentences (issue 16).

Each function is called through a real kernel with the starters installed, once with
arguments that work and once with arguments it refuses; the outcome is rendered the way
Sidekick shows it (sidekick.chat.sidekick.step_text), and the questions Sidekick asks about
each function (a missing value, a choice, a doubtful fit) are rendered as well. Each text
must read as a sentence or a short list: no field dumps, no snake_case names or error
codes, no description pasted into an error, no "how many watch id?".
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from kernelproc import KernelProc

from dreamer.sidekick.chat.sidekick import _reply, step_text
from dreamer.sidekick.planner import Tool, tools_from_agents
from dreamer.sidekick.planner.base import FunctionFacts, PartialPlan, Step
from dreamer.sidekick.planner.dialog import advance

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sidekick" / "dialogues"))
from dialogue_suite import reads_badly

# (agent, function, arguments that work, arguments it refuses). "$note", "$watch", "$query" are
# filled from earlier calls. Run in this order: later calls use what earlier ones made.
CALLS: list[tuple[str, str, dict[str, Any], dict[str, Any] | None]] = [
    ("grocery", "clear", {}, {"unexpected": 1}),
    ("grocery", "add_items", {"items": ["milk", "eggs"]}, {"items": []}),
    ("grocery", "list_items", {}, {"unexpected": 1}),
    ("grocery", "remove_items", {"items": ["milk"]}, {"items": "milk"}),
    ("recipes", "suggest", {"ingredient": "chicken"}, {"cuisine": "martian"}),
    ("recipes", "get_recipe", {"name": "carbonara"}, {"name": "unicorn stew"}),
    ("recipes", "plan_dinner", {"day": "tomorrow"}, {"day": "the 45th of smarch"}),
    ("notes", "save", {"text": "the bike lock code is 0715"}, {"text": "   "}),
    ("notes", "search", {"query": "bike"}, {"query": ""}),
    ("notes", "recent", {}, {"limit": 0}),
    ("notes", "save_article", {"url": "https://example.com/story", "text": "A long story about bikes."}, {"url": "not a link"}),
    ("notes", "add_todo", {"text": "call the bank"}, {"text": ""}),
    ("notes", "todos", {}, {"unexpected": 1}),
    ("notes", "finish_todo", {"text": "call the bank"}, {"text": "fly to the moon"}),
    ("notes", "delete", {"note_id": "$note"}, {"note_id": 987654}),
    ("calendar", "add_event", {"title": "dentist", "start": "tomorrow 3pm"}, {"title": "dentist", "start": "the 45th"}),
    ("calendar", "agenda", {"day": "tomorrow"}, {"day": "someday maybe"}),
    ("calendar", "next_event", {"title": "dentist"}, {"unexpected": 1}),
    ("calendar", "briefing", {"day": "tomorrow"}, {"day": "someday maybe"}),
    ("calendar", "move_event", {"title": "dentist", "start": "next monday 4pm"}, {"title": "nothing like this", "start": "friday"}),
    ("calendar", "remove_event", {"title": "dentist"}, {"title": "nothing like this"}),
    ("watch", "add_watch", {"url": "https://example.com/tickets", "what": "on sale"}, {"url": "ftp://example.com"}),
    ("watch", "list_watches", {}, {"unexpected": 1}),
    ("watch", "check_now", {}, {"unexpected": 1}),
    ("watch", "remove_watch", {"watch_id": "$watch"}, {"watch_id": 987654}),
    ("sql-explorer", "list_tables", {}, {"connection": "no-such-database"}),
    ("sql-explorer", "get_schema", {"table": "employees"}, {"table": "no_such_table"}),
    ("sql-explorer", "execute_sql", {"sql": "SELECT count(*) AS n FROM employees"}, {"sql": "DELETE FROM employees"}),
    ("sql-explorer", "export", {"query_id": "$query", "format": "csv"}, {"query_id": "nope"}),
]

SNAKE = re.compile(r"(?<![/\w.`-])[a-z]+_[a-z_]+(?![\w/.`-])")  # a field or code name outside a path or backticks
CODES = re.compile(r"\b(?:invalid_argument|not_found|permission_denied|agent_error|internal_error|kind)\b")


def problems(text: str, tool: Tool | None = None) -> list[str]:
    out: list[str] = []
    bad = reads_badly(text)
    if bad:
        out.append(bad)
    # A database's tables and columns are names the user queries by (sql-explorer shows them as data).
    data_names = tool is not None and tool.agent == "sql-explorer"
    for found in ([] if data_names else SNAKE.findall(text)) + CODES.findall(text):
        out.append(f"a raw name or code: {found!r}")
    if re.search(r"\(\w[\w ]*: [^)]*\)", text):
        out.append("arguments shown as (name: value)")
    if re.search(r"\bhow many \w+ id\b", text, re.IGNORECASE):
        out.append("asks 'how many ... id'")
    if tool is not None:
        rest = " ".join(tool.description.split("\n\n", 1)[-1].split()) if "\n\n" in tool.description else ""
        if rest and rest[:60] in " ".join(text.split()):
            out.append("the function's description is pasted in")
        if len(tool.summary) > 80 and tool.summary in text:
            out.append("the whole first sentence of the description is pasted in")
    if text[:1].islower() and not data_names:
        out.append("starts in lower case")
    return out


def _call(kernel: KernelProc, agent: str, function: str, args: dict[str, Any]) -> dict[str, Any]:
    with kernel.client() as c:
        out = c.post(f"/v1/agents/{agent}/functions/{function}", json={"args": args, "confirm": True}, timeout=120)
    body = out.json()
    if out.status_code < 400:
        return {"agent": agent, "function": function, "args": args, "ok": True, "result": body["result"]}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    return {"agent": agent, "function": function, "args": args, "ok": False,
            "error": {"code": error.get("code"), "message": error.get("message")}}


@pytest.fixture(scope="module")
def tools(kernel: KernelProc) -> dict[str, Tool]:
    with kernel.client() as c:
        agents = c.get("/v1/agents").json()
    listed = agents["agents"] if isinstance(agents, dict) else agents
    return {t.name: t for t in tools_from_agents(listed)}


def test_every_starter_function_reads_as_sentences(kernel: KernelProc, tools: dict[str, Tool]) -> None:
    made: dict[str, Any] = {}
    seen: set[str] = set()
    failures: list[str] = []
    for agent, function, good, bad in CALLS:
        tool = tools[f"{agent}.{function}"]
        seen.add(tool.name)
        args = {k: made.get(v, v) if isinstance(v, str) and v.startswith("$") else v for k, v in good.items()}
        call = _call(kernel, agent, function, args)
        if not call["ok"]:
            failures.append(f"{tool.name}{args} failed: {call['error']}")
            continue
        result = call["result"]
        if function == "save":
            made["$note"] = result["id"]
        if function == "add_watch":
            made["$watch"] = result["id"]
        if function == "execute_sql":
            made["$query"] = result.get("query_id")
        for text in (step_text(tool, call), step_text(tool, _call(kernel, agent, function, bad or {}))
                     if bad is not None else ""):
            if text:
                failures += [f"{tool.name}: {p}: {text!r}" for p in problems(text, tool)]
    assert not failures, "\n".join(failures)
    # Every exported starter function Sidekick lists is covered.
    listed = {t.name for t in tools.values() if t.listed and t.agent in ("grocery", "recipes", "notes", "calendar", "watch")}
    assert listed <= seen, listed - seen


def test_questions_about_every_function_read_as_sentences(tools: dict[str, Tool]) -> None:
    failures: list[str] = []
    for tool in tools.values():
        facts = {tool.name: FunctionFacts.of(tool)}
        # A missing required value: "Stop watching a page: which watch? Say its number."
        for name in tool.required:
            step = Step(tool.agent, tool.function, {})
            plan = advance(PartialPlan(steps=(step,), choices=((),), facts=facts, index=0))
            if plan.pending is not None:
                text = _reply(plan, [])
                failures += [f"{tool.name} asking for {name}: {p}: {text!r}" for p in problems(text, tool)]
            break
        # A choice between two functions, and a doubtful single guess, with an argument filled.
        args = {name: "bread" for name in tool.required[:1]}
        step = Step(tool.agent, tool.function, args)
        other = Step("grocery", "add_items", {"items": ["bread"]})
        both = {**facts, other.name: FunctionFacts.of(tools[other.name])}
        for choices in ((step, other), (step,)):
            plan = advance(PartialPlan(steps=(step,), choices=(choices,), facts=both, index=0))
            text = _reply(plan, [])
            failures += [f"{tool.name} offered: {p}: {text!r}" for p in problems(text, tool)]
            if len(choices) == 1:
                assert text.count(tools[tool.name].summary[:30]) <= 1, text  # the guess is not listed twice
    assert not failures, "\n".join(failures)
