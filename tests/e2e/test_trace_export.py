"""`dreamer traces export` through a real kernel (issue 20): a sandboxed agent that asks the
model (the fake OpenAI-compatible server, over HTTP) and rewards itself, a background run
that fails once and is retried, and a Sidekick turn planned by the model; exported in the
three formats, checked against Agent Lightning's models (tests/tracing/agentlightning_schema.json),
per user, with secrets planted in an agent's trigger secret, a tool call and a model request."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fakes"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tracing"))

from agentlightning_check import agl_spans, valid
from kernelproc import KernelProc, start_kernel, write_bundle
from llm_server import Call, FakeLLMServer, Text, ToolCalls

PROVIDER_KEY = "sk-export-provider-key-0123456789"
HOOK_SECRET = "hook-secret-Qm9vLz1xYXJ0ZW4tc2VjcmV0"

CODE = '''
from dreamer.sdk import Context, function

@function(exported=True)
def ask(ctx: Context, question: str) -> str:
    """Asks the model a question and judges the answer."""
    answer = ctx.llm(question, variant="fast")
    ctx.emit_reward(0.5, note="it answered")
    return answer

@function(background=True, retries=1)
def nightly(ctx: Context) -> dict:
    """Fails its first attempt on purpose, then asks the model."""
    if ctx.attempt == 1:
        raise RuntimeError("the first attempt fails on purpose")
    answer = ctx.llm("summarise the night", variant="fast")
    ctx.emit_reward(1.0, note="summarised")
    return {"answer": answer, "attempt": ctx.attempt}

@function
def on_hook(ctx: Context, request: dict) -> dict:
    """Receives webhooks."""
    return {}
'''


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def world(fake: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One kernel, two users, and every kind of rollout, made once for the module."""
    kernel = start_kernel(tmp_path_factory.mktemp("export") / "home",
                          fake.kernel_env(api_key=PROVIDER_KEY, DREAMER_RETRY_DELAY="0.2"))
    try:
        folder = write_bundle(tmp_path_factory.mktemp("export-bundles"), "trainee", CODE, required=["llm", "schedule"])
        with (folder / "agent.yaml").open("a") as yaml:
            yaml.write("triggers:\n  - {type: webhook, entrypoint: on_hook, name: hook}\n")
        done = kernel.cli("install", str(folder), "--yes")
        assert done.returncode == 0, done.stderr + done.stdout
        done = kernel.cli("trigger", "secret", "trainee", "hook", HOOK_SECRET)
        assert done.returncode == 0, done.stderr + done.stdout
        token = kernel.token
        question = f"my token is {token} and the hook secret is {HOOK_SECRET}; what is 2+2?"

        # A direct call whose arguments and model request carry the secrets, and whose answer echoes one.
        fake.script(Text(f"4 (and I saw {HOOK_SECRET})", input_tokens=31, output_tokens=7))
        called = kernel.cli_json("call", "trainee", "ask", json.dumps({"question": question}))

        # A background run: attempt 1 fails, attempt 2 asks the model and rewards itself.
        fake.script(Text("A quiet night."))
        queued = kernel.cli_json("call", "trainee", "nightly", "{}")
        run_id = queued["invocation_id"]
        with kernel.client() as c:
            deadline = time.monotonic() + 90
            while (run := c.get(f"/v1/invocations/{run_id}").json())["status"] != "succeeded":
                assert run["status"] in ("queued", "running"), run
                assert time.monotonic() < deadline, f"the background run stayed {run['status']}"
                time.sleep(0.1)

        # A Sidekick turn planned by the model, which calls the agent with a secret in the tool call.
        fake.script(ToolCalls([Call("trainee__ask", {"question": f"use {HOOK_SECRET} to say hi"})]),
                    Text("hi"), Text("The agent said hi."))
        chat = kernel.cli("chat", "ask the trainee to say hi", "--json")
        assert chat.returncode == 0, chat.stderr + chat.stdout
        assert json.loads(chat.stdout)["reply"] == "The agent said hi."
        exported = kernel.cli("traces", "export")
        (turn,) = [r["rollout"]["rollout_id"] for r in map(json.loads, exported.stdout.splitlines())
                   if r["rollout"]["metadata"]["dreamer"]["kind"] == "sidekick_turn"]

        bob = kernel.cli_json("users", "add", "bob")["token"]
        bobs = kernel.cli_json("call", "grocery", "add_items", '{"items": ["bobs-secret-pears"]}', token=bob)
        yield {"kernel": kernel, "token": token, "bob": bob, "called": called, "run_id": run_id, "turn": turn,
               "bobs_call": bobs["invocation_id"]}
    finally:
        kernel.stop()


def export(world: dict[str, Any], fmt: str, *extra: str, token: str | None = None) -> bytes:
    kernel: KernelProc = world["kernel"]
    done = kernel.cli("traces", "export", "--format", fmt, *extra, token=token)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout.encode()


def lines(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def by_id(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["rollout"]["rollout_id"]: r for r in records}


def test_agentlightning_rollouts_and_events_validate_and_say_what_happened(world: dict[str, Any]) -> None:
    records = lines(export(world, "agentlightning"))
    for record in records:
        valid("RolloutDetail", {"rollout": record["rollout"], "attempts": record["attempts"]})
        for event in record["events"]:
            valid("Event", event)
            assert (event["rollout_id"], event["attempt_id"] in record["attempts"]) == (record["rollout"]["rollout_id"], True)
            valid({"model_request": "ModelRequestData", "reward": "RewardData"}[event["event_type"]], event["data"])
    rollouts = by_id(records)

    call = rollouts[world["called"]["invocation_id"]]
    assert call["rollout"]["metadata"]["dreamer"]["kind"] == "call" and call["attempts"] == ["1"]
    request, reward = call["events"]
    assert request["event_type"] == "model_request" and reward["event_type"] == "reward"
    data = request["data"]
    assert data["status"] == "ok" and data["finish_reason"] == "end_turn" and data["latency_ms"] >= 0
    assert (data["usage"]["input_tokens"], data["usage"]["output_tokens"]) == (31, 7)
    assert "what is 2+2?" in data["request"]["messages"][-1]["content"]
    assert data["response"]["choices"][0]["message"]["content"].startswith("4 (and I saw ")
    assert reward["data"] | {"dreamer": None} == {"value": 0.5, "message": "it answered", "source": "agent", "reason": None,
                                                 "dreamer": None}

    run = rollouts[world["run_id"]]
    assert run["rollout"]["metadata"]["dreamer"]["kind"] == "background_run"
    assert run["attempts"] == ["1", "2"] and run["rollout"]["status"]["last_attempt_id"] == "2"
    assert run["rollout"]["status"]["state"] == "succeeded"
    # The model call and the reward happened in the second try, and say so.
    assert [(e["event_type"], e["attempt_id"]) for e in run["events"]] == [("model_request", "2"), ("reward", "2")]

    turn = rollouts[world["turn"]]
    assert turn["rollout"]["rollout_id"].startswith("turn_")  # as feedback names a Sidekick answer
    assert turn["rollout"]["metadata"]["dreamer"]["kind"] == "sidekick_turn"
    assert turn["rollout"]["input"]["message"] == "ask the trainee to say hi"
    assert turn["rollout"]["metadata"]["dreamer"]["output"]["reply"] == "The agent said hi."
    kinds = [(e["event_type"], e["data"].get("dreamer", {}).get("invocation_id") is None) for e in turn["events"]]
    # Sidekick's two model rounds (no invocation), the agent's call in between (its invocation), its reward.
    assert kinds == [("model_request", True), ("model_request", False), ("reward", False), ("model_request", True)]


def test_otlp_lines_are_otlp_with_agentlightning_resource_and_reward_attributes(world: dict[str, Any]) -> None:
    by_rollout: dict[str, list[dict[str, Any]]] = {}
    for record in lines(export(world, "otlp")):
        spans = agl_spans(record)  # parsed as OTLP, then each one a valid Agent Lightning Span
        (rollout,) = {s["rollout_id"] for s in spans}
        by_rollout[rollout] = spans
        for attempt in {s["attempt_id"] for s in spans}:
            numbers = [s["sequence_id"] for s in spans if s["attempt_id"] == attempt]
            assert numbers == list(range(len(numbers)))  # one per span, in order, per attempt
        for span in spans:
            if span["name"] == "agentlightning.annotation":
                attrs = span["attributes"]
                valid("RewardPydanticModel", {"name": attrs["agentlightning.reward.0.name"],
                                              "value": attrs["agentlightning.reward.0.value"]})
    run = by_rollout[world["run_id"]]
    names = [(s["name"], s["attempt_id"]) for s in run]
    assert ("invoke_agent trainee", "1") in names and ("invoke_agent trainee", "2") in names
    assert any(n.startswith("chat ") and a == "2" for n, a in names)
    (reward,) = [s for s in run if s["name"] == "agentlightning.annotation"]
    assert reward["attempt_id"] == "2"
    assert (reward["attributes"]["agentlightning.reward.0.name"], reward["attributes"]["agentlightning.reward.0.value"]) == ("agent", 1.0)
    (head,) = [s for s in run if s["name"] == "invoke_agent trainee" and s["attempt_id"] == "2"]
    assert head["attributes"]["agentlightning.operation.name"] == "trainee.nightly"
    assert json.loads(head["attributes"]["agentlightning.operation.output"])["attempt"] == 2
    (chat,) = [s for s in run if s["name"].startswith("chat ")]
    assert chat["attributes"]["gen_ai.prompt.0.content"] == "summarise the night"
    assert chat["attributes"]["gen_ai.completion.0.content"] == "A quiet night."
    # The turn's own model calls keep their spans, with the prompt and completion on them.
    turn = by_rollout[world["turn"]]
    assert sum(1 for s in turn if s["name"].startswith("chat ") and "gen_ai.completion.0.content" in s["attributes"]) == 3


def test_triplets_validate_one_per_model_call(world: dict[str, Any]) -> None:
    triplets = lines(export(world, "triplets"))
    for t in triplets:
        valid("Triplet", t)
    mine = [t for t in triplets if t["metadata"]["rollout_id"] == world["called"]["invocation_id"]]
    (one,) = mine
    assert one["reward"] == 0.5 and one["metadata"]["rewards"][0]["source"] == "agent"
    assert one["prompt"][-1]["role"] == "user" and one["response"]["role"] == "assistant"
    turn = [t for t in triplets if t["metadata"]["rollout_id"] == world["turn"]]
    assert [t["metadata"]["sequence_id"] for t in turn] == [0, 1, 2]


def test_no_secret_or_token_is_in_any_export(world: dict[str, Any]) -> None:
    planted = [world["token"], HOOK_SECRET, PROVIDER_KEY, world["bob"]]
    for fmt in ("agentlightning", "otlp", "triplets"):
        raw = export(world, fmt, "--all-users")
        for secret in planted:
            assert secret.encode() not in raw, f"a planted secret is in the {fmt} export"
        assert b"[redacted]" in raw  # they were there, and were taken out
        assert b"what is 2+2?" in raw  # and the rest of the text stayed


def test_a_user_sees_only_their_own_and_only_the_administrator_exports_everyone(world: dict[str, Any]) -> None:
    kernel: KernelProc = world["kernel"]
    bobs = export(world, "agentlightning", token=world["bob"])
    assert set(by_id(lines(bobs))) == {world["bobs_call"]}
    for other in (world["called"]["invocation_id"], world["run_id"], world["turn"], "what is 2+2"):
        assert other.encode() not in bobs
    mine = by_id(lines(export(world, "agentlightning")))
    assert world["bobs_call"] not in mine and b"bobs-secret-pears" not in export(world, "triplets")

    refused = kernel.cli("traces", "export", "--all-users", "--json", token=world["bob"])
    # The whole of stdout is the one error: not a line of anyone's export came before it.
    assert refused.returncode != 0 and json.loads(refused.stdout)["error"]["code"] == "forbidden"
    everyone = by_id(lines(export(world, "agentlightning", "--all-users")))
    assert world["bobs_call"] in everyone and world["run_id"] in everyone
    # The administrator acting for bob gets bob's alone.
    assert set(by_id(lines(export(world, "agentlightning", "--user", "bob")))) == {world["bobs_call"]}


def test_opting_out_keeps_a_user_out_of_every_export(world: dict[str, Any], tmp_path: Path) -> None:
    kernel: KernelProc = world["kernel"]
    assert kernel.cli_json("traces", "opt-out", token=world["bob"])["opt_out"] is True
    try:
        assert world["bobs_call"] not in by_id(lines(export(world, "agentlightning", "--all-users")))
        target = tmp_path / "bob.jsonl"
        refused = kernel.cli("traces", "export", "--out", str(target), "--json", token=world["bob"])
        assert json.loads(refused.stdout)["error"]["code"] == "conflict"
        assert "opt-in" in json.loads(refused.stdout)["error"]["message"]
        assert not target.exists() and list(tmp_path.iterdir()) == []  # nothing half-written
    finally:
        assert kernel.cli_json("traces", "opt-in", token=world["bob"])["opt_out"] is False
    written = kernel.cli_json("traces", "export", "--out", str(tmp_path / "bob.jsonl"), token=world["bob"])
    assert written["lines"] == 1 and len(lines((tmp_path / "bob.jsonl").read_bytes())) == 1


def test_since_and_bad_input_get_one_sentence(world: dict[str, Any]) -> None:
    kernel: KernelProc = world["kernel"]
    assert lines(export(world, "agentlightning", "--since", "2999-01-01")) == []
    assert len(lines(export(world, "agentlightning", "--since", "1d"))) >= 3
    bad = kernel.cli("traces", "export", "--since", "yesterday-ish", "--json")
    assert bad.returncode != 0 and "--since must be like" in json.loads(bad.stdout)["error"]["message"]
    with kernel.client() as c:
        wrong = c.get("/v1/traces/export", params={"format": "csv"})
        assert wrong.status_code == 422 and "unknown export format" in wrong.json()["error"]["message"]
