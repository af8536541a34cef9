"""The model gateway through a real kernel: agents call `ctx.llm` from their sandbox,
the kernel checks the `llm` grant and the user's budget, asks an OpenAI-compatible
server (the fake, over HTTP) and records the usage in its store."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fakes"))

from kernelproc import KernelProc, start_kernel, write_bundle
from llm_server import Fail, FakeLLMServer, Text

ASKER = '''
from dreamer.sdk import CallError, Context, function

MOOD = {"type": "object", "properties": {"mood": {"enum": ["happy", "sad"]}}, "required": ["mood"]}

@function(exported=True)
def ask(ctx: Context, question: str, variant: str = "fast") -> str:
    """Asks the model a question."""
    return ctx.llm(question, variant=variant, system="Answer in one word.")

@function(exported=True)
def mood(ctx: Context, text: str) -> dict:
    """Classifies the mood of a text."""
    return ctx.llm(f"What is the mood of: {text}", schema=MOOD, variant="fast")

@function(exported=True)
def careful(ctx: Context) -> str:
    """Handles a refusal itself."""
    try:
        return ctx.llm("hello", variant="standard")
    except CallError as e:
        return f"refused: {e.kind}"
'''

# The standard model is priced so that two calls spend a $0.002 budget; the fast one is free.
CONFIG = """
[llm]
budget_usd = 0.002

[llm.prices."medium-1"]
input = 100
output = 100
"""


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def llm_kernel(fake: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    home = tmp_path_factory.mktemp("llm") / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    kernel = start_kernel(home, fake.kernel_env(api_key="sk-e2e-secret", DREAMER_LLM_MODEL_FAST="small-1"))
    root = tmp_path_factory.mktemp("llm-bundles")
    try:
        for name, scopes in (("asker", ["llm"]), ("no-model", [])):
            done = kernel.cli("install", str(write_bundle(root, name, ASKER, required=scopes)), "--yes")
            assert done.returncode == 0, done.stderr + done.stdout
        yield kernel
    finally:
        kernel.stop()


@pytest.fixture(autouse=True)
def clean_script(fake: FakeLLMServer) -> Iterator[None]:
    fake.reset()
    yield
    assert fake.pending == 0, "a scripted reply was not used"


def usage_rows(kernel: KernelProc) -> list[tuple[object, ...]]:
    with sqlite3.connect(kernel.home / "kernel.db") as db:
        return db.execute(
            "select u.name, l.agent, l.provider, l.model, l.input_tokens, l.output_tokens, l.cost_usd, l.invocation_id "
            "from llm_usage l join users u on u.id = l.user_id order by l.id"
        ).fetchall()


def error_of(done: object) -> dict[str, str]:
    assert done.returncode != 0  # type: ignore[attr-defined]
    return json.loads(done.stdout)["error"]  # type: ignore[attr-defined]


def test_an_agent_with_the_llm_grant_gets_an_answer(llm_kernel: KernelProc, fake: FakeLLMServer) -> None:
    fake.script(Text("Soup.", input_tokens=21, output_tokens=2))
    out = llm_kernel.cli_json("call", "asker", "ask", '{"question": "What is for dinner?"}')
    assert out["result"] == "Soup."
    (sent,) = fake.requests
    assert sent.body["model"] == "small-1"
    assert sent.body["messages"] == [
        {"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "What is for dinner?"},
    ]
    assert sent.headers["authorization"] == "Bearer sk-e2e-secret"
    # The usage is in the store, for this user and agent and invocation.
    assert usage_rows(llm_kernel)[-1] == ("me", "asker", "openai", "small-1", 21, 2, 0.0, out["invocation_id"])
    # The grant check was audited, naming the model.
    audit = llm_kernel.cli_json("audit", "--limit", "20")
    assert any(e["action"] == "llm.complete" and e["decision"] == "allow" and e["target"] == "small-1" for e in audit)


def test_a_structured_answer_after_a_retry(llm_kernel: KernelProc, fake: FakeLLMServer) -> None:
    fake.script(Text('{"mood": "ecstatic"}'), Text('{"mood": "happy"}'))
    out = llm_kernel.cli_json("call", "asker", "mood", '{"text": "I won!"}')
    assert out["result"] == {"mood": "happy"}
    assert fake.requests[0].body["response_format"]["json_schema"]["schema"]["required"] == ["mood"]
    assert "is not one of ['happy', 'sad']" in fake.requests[1].body["messages"][-1]["content"]
    assert [r[1:4] for r in usage_rows(llm_kernel)[-2:]] == [("asker", "openai", "small-1")] * 2


def test_an_agent_without_the_grant_is_refused(llm_kernel: KernelProc, fake: FakeLLMServer) -> None:
    error = error_of(llm_kernel.cli("call", "no-model", "ask", '{"question": "hi"}', "--json"))
    assert error["code"] == "permission_denied"
    assert error["message"] == (
        "no-model may not complete small-1: its agent.yaml does not ask for llm "
        "(add `llm` under `permissions:` in agent.yaml, then reinstall the agent)"
    )
    assert fake.requests == []  # the provider never heard of it
    assert llm_kernel.cli_json("call", "no-model", "careful")["result"] == "refused: permission_denied"
    audit = llm_kernel.cli_json("audit", "--limit", "20")
    assert any(e["action"] == "llm.complete" and e["decision"] == "deny" and e["actor"] == "agent:no-model" for e in audit)
    assert all(row[1] != "no-model" for row in usage_rows(llm_kernel))


def test_a_provider_failure_reaches_the_caller_as_one_sentence(llm_kernel: KernelProc, fake: FakeLLMServer) -> None:
    fake.script(Fail(500, "the GPU caught fire"))
    error = error_of(llm_kernel.cli("call", "asker", "ask", '{"question": "hi"}', "--json"))
    assert error["code"] == "model_error"
    assert error["message"] == f"the model provider at {fake.url.removeprefix('http://')} failed (500): the GPU caught fire"


def test_the_monthly_budget_is_enforced_per_user(llm_kernel: KernelProc, fake: FakeLLMServer, tmp_path: Path) -> None:
    bob = llm_kernel.cli_json("users", "add", "bob")["token"]
    done = llm_kernel.cli("install", str(write_bundle(tmp_path, "asker", ASKER, required=["llm"])), "--yes", token=bob)
    assert done.returncode == 0, done.stderr + done.stdout
    # Each standard answer costs (10 + 5) * $100 / 1M = $0.0015 against bob's $0.002.
    fake.script(Text("one"), Text("two"))
    ask = ("call", "asker", "ask", '{"question": "hi", "variant": "standard"}')
    assert llm_kernel.cli_json(*ask, token=bob)["result"] == "one"
    assert llm_kernel.cli_json(*ask, token=bob)["result"] == "two"
    error = error_of(llm_kernel.cli(*ask, "--json", token=bob))
    assert error["code"] == "budget_exceeded"
    assert error["message"].startswith("you have used $0.0030 of your $0.0020 monthly model budget; raise DREAMER_LLM_BUDGET_USD")
    assert len(fake.requests) == 2
    # An agent may handle the refusal; other users are not affected.
    assert llm_kernel.cli_json("call", "asker", "careful", token=bob)["result"] == "refused: budget_exceeded"
    fake.script(Text("fine"))
    assert llm_kernel.cli_json("call", "asker", "careful")["result"] == "fine"


def test_doctor_names_the_provider_and_never_the_key(llm_kernel: KernelProc, fake: FakeLLMServer) -> None:
    done = llm_kernel.cli("doctor", "--json")
    report = json.loads(done.stdout)
    llm = report["llm"]
    assert (llm["provider"], llm["available"], llm["base_url"]) == ("openai", True, fake.openai_url)
    assert llm["models"] == {"fast": "small-1", "standard": "medium-1", "powerful": "medium-1"}
    assert (llm["api_key_from"], llm["budget_usd"]) == ("DREAMER_LLM_API_KEY", 0.002)
    assert "sk-e2e-secret" not in done.stdout
    human = llm_kernel.cli("doctor")
    assert f"model: openai at {fake.openai_url}" in " ".join(human.stdout.split())
