"""Agent-to-agent calls through the kernel: grants, exports, cycles, depth, traces, the database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelproc import KernelProc, write_bundle

PING = '''
from dreamer.sdk import CallError, Context, function

@function(exported=True)
def ping(ctx: Context, hops: int = 0) -> dict:
    """Calls pong while hops remain."""
    if hops <= 0:
        return {"at": "ping"}
    return {"at": "ping", "next": ctx.call("pong-agent", "pong", hops=hops - 1)}

@function(exported=True)
def internal_call(ctx: Context) -> str:
    """Tries a function pong does not export."""
    return ctx.call("pong-agent", "hidden")

@function(exported=True)
def careful(ctx: Context) -> str:
    """Handles a refusal itself."""
    try:
        ctx.call("grocery", "list_items")
    except CallError as e:
        return f"refused: {e.kind}"
    return "allowed"
'''

PONG = '''
from dreamer.sdk import Context, function

@function(exported=True)
def pong(ctx: Context, hops: int = 0) -> dict:
    """Calls ping back while hops remain."""
    if hops <= 0:
        return {"at": "pong"}
    return {"at": "pong", "next": ctx.call("ping-agent", "ping", hops=hops - 1)}

@function
def hidden(ctx: Context) -> str:
    """Not exported."""
    return "secret"
'''


@pytest.fixture(scope="module")
def pair(kernel: KernelProc, tmp_path_factory: pytest.TempPathFactory) -> KernelProc:
    root = tmp_path_factory.mktemp("pair")
    for name, code, scopes in (("ping-agent", PING, ["agent:pong-agent"]), ("pong-agent", PONG, ["agent:ping-agent.ping"])):
        done = kernel.cli("install", str(write_bundle(root, name, code, required=scopes)), "--yes")
        assert done.returncode == 0, done.stderr + done.stdout
    return kernel


def test_a_call_through_the_kernel(pair: KernelProc) -> None:
    out = pair.cli_json("call", "ping-agent", "ping", '{"hops": 1}')
    assert out["result"] == {"at": "ping", "next": {"at": "pong"}}


def test_a_cycle_is_refused_not_hung(pair: KernelProc) -> None:
    done = pair.cli("call", "ping-agent", "ping", '{"hops": 2}', "--json")
    assert done.returncode != 0
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "call_cycle"
    assert "ping-agent → pong-agent → ping-agent" in error["message"]
    audit = pair.cli_json("audit", "--limit", "30")
    assert any(e["decision"] == "deny" and e["detail"].get("reason") == "call_cycle" for e in audit)


def test_unexported_functions_are_not_callable_by_agents(pair: KernelProc) -> None:
    done = pair.cli("call", "ping-agent", "internal_call", "--json")
    assert json.loads(done.stdout)["error"]["code"] == "permission_denied"
    assert "not exported" in json.loads(done.stdout)["error"]["message"]


def test_agents_can_handle_a_refusal(pair: KernelProc) -> None:
    assert pair.cli_json("call", "ping-agent", "careful")["result"] == "refused: permission_denied"


def test_every_invocation_is_traced(pair: KernelProc) -> None:
    out = pair.cli_json("call", "ping-agent", "ping", '{"hops": 1}')
    with pair.client() as c:
        run = c.get(f"/v1/invocations/{out['invocation_id']}").json()
    assert run["status"] == "succeeded"
    spans = {s["name"]: s for s in run["spans"]}
    assert {"invoke_agent ping-agent", "execute_tool agents.call", "invoke_agent pong-agent"} <= set(spans)
    outer, syscall, inner = spans["invoke_agent ping-agent"], spans["execute_tool agents.call"], spans["invoke_agent pong-agent"]
    assert syscall["parent_span_id"] == outer["span_id"] and inner["parent_span_id"] == syscall["span_id"]
    assert outer["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert outer["attributes"]["gen_ai.agent.name"] == "ping-agent"


@pytest.mark.parametrize(
    ("body", "headers", "status", "said"),
    [
        (b'{"args": {}}', {}, 200, None),
        (b'{"args": ', {}, 400, "9: JSON decode error"),
        (b'{"args": {}, "x": 1}', {}, 400, "x: Extra inputs are not permitted"),
        (b'{"args": [1]}', {}, 400, "args: Input should be a valid dictionary"),
        (b"", {}, 400, "body: Field required"),
        (b'{"args": {}}', {"content-type": "text/plain"}, 400,
         "body: Input should be a valid dictionary or object to extract fields from"),
        (b'{"args": {}}', {"authorization": "Bearer nope"}, 401, "the API token is not valid for this kernel"),
    ],
)
def test_the_plain_call_route_answers_as_fastapis_did(
    kernel: KernelProc, body: bytes, headers: dict[str, str], status: int, said: str | None
) -> None:
    """kernel/api/lean_call.py: a valid call is served without FastAPI; anything else is
    handed back to the FastAPI route, whose words these are (recorded from it)."""
    with kernel.client() as c:
        r = c.post("/v1/agents/grocery/functions/list_items", content=body,
                   headers={"content-type": "application/json", **headers})
    assert r.status_code == status, r.text
    if said is None:
        assert r.json()["status"] == "succeeded" and r.json()["invocation_id"].startswith("inv_")
        assert r.headers["content-type"] == "application/json"
    else:
        assert r.json()["error"]["message"] == said


def test_database_reads_and_asks_before_writing(kernel: KernelProc) -> None:
    kernel.cli_json("call", "grocery", "add_items", '{"items": ["eggs"]}')
    tables = kernel.cli_json("database", "grocery", "--query", "select name from sqlite_master where type='table'")
    assert tables["rows"]
    table = tables["rows"][0][0]
    refused = kernel.cli("database", "grocery", "--query", f"delete from {table}", "--json")
    assert refused.returncode != 0
    assert json.loads(refused.stdout)["error"]["code"] == "confirmation_required"
    assert "eggs" in json.dumps(kernel.cli_json("call", "grocery", "list_items")["result"])
    done = kernel.cli_json("database", "grocery", "--query", f"delete from {table}", "--yes")
    assert done["changes"] >= 1
    assert "eggs" not in json.dumps(kernel.cli_json("call", "grocery", "list_items")["result"])


def test_database_cannot_reach_kernel_files(kernel: KernelProc) -> None:
    kernel_db = kernel.home / "kernel.db"
    assert kernel_db.exists()
    done = kernel.cli(
        "database", "grocery", "--query", f"attach database '{kernel_db}' as k", "--yes", "--json"
    )
    if done.returncode == 0:
        # The attach may "succeed" on an empty file inside the sandbox; it must not see the kernel's tables.
        tables = kernel.cli_json("database", "grocery", "--query", "select name from k.sqlite_master")
        assert not tables["rows"]
    bad = kernel.cli("database", "grocery", "--query", "select * from nowhere", "--json")
    assert bad.returncode != 0 and "nowhere" in json.loads(bad.stdout)["error"]["message"]


def test_up_detach_and_down(tmp_path: Path) -> None:
    import os
    import subprocess

    from kernelproc import DREAMER, free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMER_")}
    env |= {"DREAMER_HOME": str(tmp_path / "home"), "DREAMER_URL": f"http://127.0.0.1:{port}"}
    up = subprocess.run([DREAMER, "up", "--detach", "--port", str(port)], env=env, capture_output=True, text=True, timeout=90)
    try:
        assert up.returncode == 0, up.stderr + up.stdout
        agents = subprocess.run([DREAMER, "agents", "--json"], env=env, capture_output=True, text=True, timeout=30)
        assert {"grocery", "recipes"} <= {a["name"] for a in json.loads(agents.stdout)}
    finally:
        down = subprocess.run([DREAMER, "down"], env=env, capture_output=True, text=True, timeout=60)
    assert down.returncode == 0, down.stderr
    gone = subprocess.run([DREAMER, "agents", "--json"], env=env, capture_output=True, text=True, timeout=30)
    assert gone.returncode != 0
    assert json.loads(gone.stdout)["error"]["code"] == "kernel_unreachable"
    assert "dreamer up" in json.loads(gone.stdout)["error"]["message"]
