"""A real model in the loop: SmolLM2-135M on llama.cpp's OpenAI-compatible server,
reached through the `openai` provider, in a kernel and in Sidekick's model loop.

SmolLM2-135M is weak on purpose. Its words vary with the build, so these tests assert
what must hold whatever it says: an answer always comes, nothing ungranted or
unconfirmed runs, refusals are fed back and audited, the step limit holds, and the
usage the server reports is what the budget counts. Temperature 0 makes a run repeat.
Where a scenario needs the model to call a tool, the fault proxy names the tool in
tool_choice (the model still writes the arguments); where it needs an answer no
grammar-constrained server would give (an unknown name, broken JSON, nothing), the
proxy spoils the real answer (fault_proxy.py says why).

All tests share one server and one kernel: this file is the lane, so that pytest-xdist
(--dist loadfile) keeps it on one worker.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from fault_proxy import FaultProxy
from kernelproc import KernelProc, start_kernel, write_bundle
from local_server import LANE_MAX_TOKENS, PLAIN_MODEL, TOOLS_MODEL, LocalServer, kernel_env

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.llm import ChatRequest, Done, Gateway, LLMConfig, Message, Price, TextDelta
from dreamer.kernel.llm import usage as accounting
from dreamer.kernel.store.db import Store
from dreamer.kernel.users.accounts import create_user
from dreamer.sidekick.planner import Step, Tool
from dreamer.sidekick.planner.model import ModelLoop

MOOD = {"type": "object", "properties": {"mood": {"enum": ["happy", "sad"]}}, "required": ["mood"],
        "additionalProperties": False}

ASKER = '''
from dreamer.sdk import Context, function

MOOD = {"type": "object", "properties": {"mood": {"enum": ["happy", "sad"]}}, "required": ["mood"],
        "additionalProperties": False}

@function(exported=True)
def ask(ctx: Context, question: str) -> str:
    """Asks the model a question."""
    return ctx.llm(question, system="Answer in one short sentence.", max_tokens=24)

@function(exported=True)
def mood(ctx: Context, text: str) -> dict:
    """Classifies the mood of a text."""
    return ctx.llm(f"Is this text happy or sad? {text}", schema=MOOD, max_tokens=24)
'''

ITEMS = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}, "required": ["items"]}
TOOLS = [
    Tool("grocery", "add_items", "Add items to the user's grocery list.", ITEMS),
    Tool("grocery", "clear", "Remove every item from the user's grocery list.", {"type": "object", "properties": {}},
         confirm=True),
    Tool("weather", "today", "Today's weather where the user is.", {"type": "object", "properties": {}}),
]
OFFERED = {t.name for t in TOOLS}


# -- fixtures ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kernel(proxy: FaultProxy, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    """A kernel whose openai provider reaches the real server through the proxy; the fast
    variant is the same model without tool support (for `dreamer doctor` to tell apart)."""
    home = tmp_path_factory.mktemp("local-model") / "home"
    env = kernel_env(proxy.url, DREAMER_LLM_MODEL_FAST=PLAIN_MODEL, DREAMER_LLM_BUDGET_USD="unlimited")
    k = start_kernel(home, env, wait_s=300)
    try:
        bundle = write_bundle(tmp_path_factory.mktemp("bundles"), "asker", ASKER, required=["llm"])
        done = k.cli("install", str(bundle), "--yes")
        assert done.returncode == 0, done.stderr + done.stdout
        # Only grocery stays for Sidekick: with every starter's functions its prompt is about
        # 4,700 tokens, which a CPU-only 135M model takes minutes to read on two cores.
        for agent in k.cli_json("agents"):  # type: ignore[union-attr]
            if agent["name"] not in ("grocery", "asker"):
                gone = k.cli("uninstall", agent["name"], "--yes")
                assert gone.returncode == 0, gone.stderr + gone.stdout
        for server in k.cli_json("tools"):  # type: ignore[union-attr]
            gone = k.cli("tools", "uninstall", server["server"] if "server" in server else server["name"])
            assert gone.returncode == 0, gone.stderr + gone.stdout
        yield k
    finally:
        k.stop()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(f"sqlite:///{tmp_path / 'kernel.db'}")
    s.migrate()
    yield s
    s.dispose()


def user(store: Store) -> int:
    with store.session() as s:
        made, _token = create_user(s, "ada")
        return made.id


def gateway(url: str, store: Store, **overrides: Any) -> Gateway:
    values: dict[str, Any] = {
        "provider": "openai", "base_url": url, "api_key": "no-key-configured", "api_key_source": None,
        "models": {"fast": TOOLS_MODEL, "standard": TOOLS_MODEL, "powerful": TOOLS_MODEL}, "budget_usd": None,
        "timeout_s": 120.0, "max_retries": 0, "temperature": 0.0, "max_tokens": LANE_MAX_TOKENS,
    }
    return Gateway(LLMConfig(**(values | overrides)), store)


def usage_rows(kernel: KernelProc) -> list[dict[str, Any]]:
    with sqlite3.connect(kernel.home / "kernel.db") as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("select * from llm_usage order by id")]


def chat(kernel: KernelProc, message: str, conversation: str | None = None) -> list[dict[str, Any]]:
    body: dict[str, Any] = {"message": message} | ({"conversation_id": conversation} if conversation else {})
    events: list[dict[str, Any]] = []
    name = ""
    with kernel.client() as c, c.stream("POST", "/v1/chat", json=body, timeout=600) as r:
        assert r.status_code == 200, r.read()
        for line in r.iter_lines():  # server-sent events: "event: NAME" then "data: JSON"
            if line.startswith("event:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                events.append({"event": name} | json.loads(line.split(":", 1)[1]))
    return events


def grocery(kernel: KernelProc) -> list[str]:
    items = kernel.cli_json("call", "grocery", "list_items")["result"]["items"]  # type: ignore[index]
    return [str(i.get("name", i) if isinstance(i, dict) else i).lower() for i in items]


class Recorder:
    """The loop's `call`: records each step it is asked to run and answers `answer`."""

    def __init__(self, answer: dict[str, Any] | None = None) -> None:
        self.steps: list[Step] = []
        self.answer = answer or {"ok": True, "result": {"done": True}}

    async def __call__(self, step: Step) -> dict[str, Any]:
        self.steps.append(step)
        return dict(self.answer)


def run_loop(g: Gateway, text: str, calls: Recorder, loop: ModelLoop | None = None) -> list[dict[str, Any]]:
    async def main() -> list[dict[str, Any]]:
        try:
            return [e async for e in (loop or ModelLoop()).run(text, TOOLS, [], calls, g, user_id)]
        finally:
            await g.aclose()

    user_id = user(g.store)
    return asyncio.run(main())


def reply_of(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert events[-1]["event"] == "reply"
    assert events[-1]["text"].strip(), "the user always gets an answer"
    return events[-1]


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


# -- the model gateway, through a kernel -------------------------------------------------


def test_plain_completion_records_the_servers_own_token_counts(kernel: KernelProc, local_server: LocalServer) -> None:
    out = kernel.cli_json("call", "asker", "ask", '{"question": "What colour is the sky?"}')
    assert isinstance(out["result"], str) and out["result"].strip()  # type: ignore[index]
    row = usage_rows(kernel)[-1]
    assert (row["agent"], row["provider"], row["invocation_id"]) == ("asker", "openai", out["invocation_id"])  # type: ignore[index]
    # The same request straight to the server: its prompt_tokens is what was recorded.
    direct = httpx.post(f"{local_server.url}/chat/completions", timeout=120, json={
        "model": TOOLS_MODEL, "max_tokens": 24, "temperature": 0,
        "messages": [{"role": "system", "content": "Answer in one short sentence."},
                     {"role": "user", "content": "What colour is the sky?"}],
    }).json()
    assert row["input_tokens"] == direct["usage"]["prompt_tokens"] > 0
    assert 0 < row["output_tokens"] <= 24


def test_a_schema_answer_is_constrained_by_the_server_and_validated(kernel: KernelProc, proxy: FaultProxy) -> None:
    out = kernel.cli_json("call", "asker", "mood", '{"text": "I won the lottery today!"}')
    jsonschema.validate(out["result"], MOOD)  # type: ignore[index]
    # llama.cpp refuses json_schema (422); the provider then sends json_object with the schema,
    # which the server turns into a grammar, so the weak model's answer parses and validates.
    formats = [r.get("response_format", {}).get("type") for r in proxy.requests]
    assert formats[-1] == "json_object" and proxy.requests[-1]["response_format"]["schema"] == MOOD


# -- Sidekick: streaming, tools, confirmation, fallback ---------------------------------------


def test_chat_streams_and_nothing_unconfirmed_runs(kernel: KernelProc, proxy: FaultProxy) -> None:
    kernel.cli_json("call", "grocery", "add_items", '{"items": ["tea"]}')
    before = len(usage_rows(kernel))
    events = chat(kernel, "Please add milk to my grocery list.")
    start, done = events[0], events[-1]
    assert start["planner"] == "model" and done["event"] == "done"
    assert done["reply"].strip()
    # The reply reached the client in the stream, as text events.
    assert "".join(e["delta"] for e in events if e["event"] == "text").strip()
    exported = {(a["name"], f["name"]) for a in kernel.cli_json("agents")  # type: ignore[union-attr]
                for f in a.get("functions") or [] if f.get("exported")}
    for call in done["calls"]:  # whatever the model chose: only exported functions, never clear unasked
        assert (call["agent"], call["function"]) in exported and call["function"] != "clear"
    assert "tea" in grocery(kernel)
    # Each model call is recorded with the server's token counts (Sidekick's: no agent).
    rows = usage_rows(kernel)[before:]
    assert rows and all(r["agent"] is None and r["input_tokens"] > 0 for r in rows)


def test_a_confirm_function_the_model_calls_waits_for_a_yes(kernel: KernelProc, proxy: FaultProxy) -> None:
    kernel.cli_json("call", "grocery", "add_items", '{"items": ["bread"]}')
    proxy.reset(force="grocery__clear", force_rounds=1)
    events = chat(kernel, "Empty my grocery list.")
    done = events[-1]
    assert done["calls"] == [] and done["pending"]["kind"] == "confirm"
    assert "bread" in grocery(kernel)  # nothing ran
    audit = kernel.cli_json("audit", "--limit", "50")
    assert any(e["action"] == "sidekick.model_call" and e["target"] == "grocery.clear" and e["decision"] == "deny"
               for e in audit)  # type: ignore[union-attr]
    no = chat(kernel, "no", done["conversation_id"])
    assert no[-1]["calls"] == [] and "bread" in grocery(kernel)


def test_an_empty_model_answer_falls_back_to_the_offline_planner(kernel: KernelProc, proxy: FaultProxy) -> None:
    proxy.reset(mode="blank")
    events = chat(kernel, "add oat milk to my grocery list")
    done = events[-1]
    assert "The offline planner answered instead" in done["reply"]
    # Normally the blanked answer; on a machine too busy for the model, its timeout: either
    # way the model produced no plan, and the reply says which.
    assert ("empty answer" in done["reply"]) == (proxy.spoiled >= 1) or "did not answer within" in done["reply"]
    # The offline planner understood it and the agent ran: the user got what they asked for.
    assert [(c["function"], c["ok"]) for c in done["calls"]] == [("add_items", True)]
    assert any("oat milk" in item for item in grocery(kernel))


# -- the model loop against a weak model ------------------------------------------------


def test_a_hallucinated_function_is_refused_and_fed_back(proxy: FaultProxy, store: Store) -> None:
    proxy.reset(mode="rename", force="grocery__add_items", force_rounds=1)
    calls = Recorder()
    events = run_loop(gateway(proxy.url, store), "Add apples to my grocery list.", calls, ModelLoop(max_steps=3))
    reply_of(events)
    assert proxy.spoiled >= 1
    assert all(s.name in OFFERED for s in calls.steps)  # nothing the model made up ran
    refused = [e for e in events if e["event"] == "refused"]
    assert refused and refused[0]["call"] == "launch_rockets"
    # The next request told the model what was wrong (llama-cpp-python's function-calling
    # template then leaves tool messages out of the prompt: docs/MODELS.md).
    told = [m for r in proxy.requests[1:] for m in tool_messages(r)]
    assert any("launch_rockets" in m and "not one of the tools" in m for m in told)


def test_malformed_arguments_are_refused_and_fed_back(proxy: FaultProxy, store: Store) -> None:
    proxy.reset(mode="garble", force="grocery__add_items", force_rounds=1)
    calls = Recorder()
    events = run_loop(gateway(proxy.url, store), "Add apples to my grocery list.", calls, ModelLoop(max_steps=3))
    reply_of(events)
    assert proxy.spoiled >= 1
    # No step ran with arguments the model did not send whole.
    assert all(isinstance(s.args, dict) and s.name in OFFERED for s in calls.steps)
    told = [m for r in proxy.requests[1:] for m in tool_messages(r)]
    assert any("not valid JSON" in m for m in told)


def test_an_endless_tool_loop_stops_at_the_step_limit(proxy: FaultProxy, store: Store) -> None:
    proxy.reset(force="weather__today")  # every round: the model calls again, whatever it read
    calls = Recorder({"ok": False, "error": {"code": "busy", "message": "the weather service is busy; try again"}})
    events = run_loop(gateway(proxy.url, store), "What is the weather today?", calls, ModelLoop(max_steps=3))
    reply = reply_of(events)
    assert reply["failed"] == "the model did not finish within 3 steps"
    assert len(calls.steps) == 3 and len(proxy.requests) == 3


def test_a_model_that_ignores_tools_still_answers_and_runs_nothing(local_server: LocalServer, store: Store) -> None:
    calls = Recorder()
    g = gateway(local_server.url, store, models={v: PLAIN_MODEL for v in ("fast", "standard", "powerful")})
    events = run_loop(g, "Add apples to my grocery list.", calls, ModelLoop(max_steps=3))
    reply = reply_of(events)
    assert calls.steps == [] and reply["pending"] is None


# -- budgets and streams, in process ------------------------------------------------------


def test_the_budget_counts_the_servers_tokens(local_server: LocalServer, store: Store) -> None:
    # $1 per token: one call spends far more than the $0.50 budget.
    g = gateway(local_server.url, store, budget_usd=0.5, prices={TOOLS_MODEL: Price(input=1e6, output=1e6)})
    user_id = user(store)

    async def main() -> tuple[Any, DreamerError | None, list[Any]]:
        try:
            first = await g.complete(ChatRequest([Message.user("Say hello.")], max_tokens=8), user_id=user_id)
            try:
                await g.complete(ChatRequest([Message.user("Say hello again.")], max_tokens=8), user_id=user_id)
            except DreamerError as exc:
                return first, exc, []
            return first, None, []
        finally:
            await g.aclose()

    first, refused, _ = asyncio.run(main())
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0
    # What was spent is the server's token counts at the configured price, to the cent.
    spent = accounting.spent_since(store, user_id, accounting.month_start(datetime.now(timezone.utc)))
    assert spent == pytest.approx(first.usage.input_tokens + first.usage.output_tokens)
    assert refused is not None and refused.code == "budget_exceeded"


def test_a_plain_stream_arrives_in_pieces_and_is_counted(local_server: LocalServer, store: Store) -> None:
    g = gateway(local_server.url, store)
    user_id = user(store)

    async def main() -> list[Any]:
        try:
            request = ChatRequest([Message.user("Count from one to five.")], max_tokens=24)
            return [e async for e in g.stream(request, user_id=user_id)]
        finally:
            await g.aclose()

    events = asyncio.run(main())
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    done = events[-1]
    assert isinstance(done, Done) and len(deltas) > 1 and "".join(deltas) == done.response.text
    assert done.response.usage.output_tokens > 0 and done.response.usage.input_tokens > 0


# -- dreamer doctor -------------------------------------------------------------------------


def test_doctor_checks_the_endpoint_for_real(kernel: KernelProc) -> None:
    report = kernel.cli_json("doctor")
    probes = {p["model"]: p for p in report["llm"]["probe"]}  # type: ignore[index]
    assert probes[TOOLS_MODEL]["answers"] and probes[TOOLS_MODEL]["tools"]
    assert set(probes[TOOLS_MODEL]["variants"]) == {"standard", "powerful"}
    plain = probes[PLAIN_MODEL]
    assert plain["answers"] and not plain["tools"] and "does not call tools" in plain["detail"]
    text = kernel.cli("doctor")
    assert text.returncode == 0, text.stderr + text.stdout
    assert f"{PLAIN_MODEL} (fast): it answers, but does not call tools" in " ".join(text.stdout.split())
