"""Tools through a real kernel: install a tool bundle, agents calling granted, ungranted and
disabled tools, the CLI and /v1 endpoints, a crashed and a hung stdio server in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kernelproc import KernelProc, write_bundle

USER = '''
from dreamer.sdk import CallError, Context, function

@function(exported=True)
def echo(ctx: Context, text: str) -> dict:
    """Calls the echo tool."""
    return ctx.tools.call("echo.say", {"text": text, "times": 2})

@function(exported=True)
def attempt(ctx: Context, tool: str, args: dict) -> str:
    """Calls a tool and reports how it went."""
    try:
        return json.dumps(ctx.tools.call(tool, args))
    except CallError as e:
        return f"{e.kind}: {e.message}"

@function(exported=True)
def visible(ctx: Context) -> list:
    """The tools this agent may call."""
    return [t["name"] for t in ctx.tools.list()]

import json
'''

BUNDLES = Path(__file__).resolve().parent / "bundles"


@pytest.fixture(scope="module")
def kernel(tool_kernel: KernelProc, tmp_path_factory: pytest.TempPathFactory) -> KernelProc:
    staged = tool_kernel.cli_json("install", str(BUNDLES / "echo"), "--yes", "--without", "tool:echo.write_note")
    assert staged["name"] == "echo"
    root = tmp_path_factory.mktemp("agents")
    bundle = write_bundle(root, "echoer", USER, required=["tool:echo.say"], optional=["tool:echo.crash", "tool:echo.hang", "tool:echo.write_note"])
    grants = [arg for scope in ("tool:echo.crash", "tool:echo.hang", "tool:echo.write_note") for arg in ("--grant", scope)]
    done = tool_kernel.cli("install", str(bundle), "--yes", *grants)
    assert done.returncode == 0, done.stderr
    return tool_kernel


def call(kernel: KernelProc, function: str, **args: object) -> object:
    return kernel.cli_json("call", "echoer", function, json.dumps(args))["result"]


def test_install_review_shows_tools_with_hints(kernel: KernelProc) -> None:
    listed = kernel.cli_json("tools")
    echo = next(s for s in listed if s["name"] == "echo")
    tools = {t["name"]: t for t in echo["tools"]}
    assert tools["say"]["annotations"] == {"read_only_hint": True}
    assert tools["write_note"]["enabled"] is False  # left out at install
    assert echo["transport"] == "stdio"


def test_the_review_reads_annotations_as_hints(kernel: KernelProc) -> None:
    from dreamer.contracts.archive import pack

    with kernel.client() as http:
        staged = http.post("/v1/bundles", content=pack(BUNDLES / "echo"), headers={"Content-Type": "application/gzip"}).json()
    review = staged["review"]
    assert review["kind"] == "tool" and "inside your sandbox" in review["server"]["runs"]
    rows = {t["name"]: t for t in review["tools"]}
    assert rows["say"]["writes"] == "reads only" and rows["write_note"]["writes"] == "may change or delete data"
    assert rows["crash"]["destructive_hint"] is True  # no annotations: MCP's cautious defaults
    assert rows["say"]["reaches"].startswith("only its own data folder") and "not checked" in rows["say"]["hints"]
    assert {r["scope"] for r in review["scopes"]} == {f"tool:echo.{n}" for n in rows}  # each tool a switch


def test_agent_calls_a_granted_tool_in_the_sandbox(kernel: KernelProc) -> None:
    assert call(kernel, "echo", text="hi") == {"text": "hi hi", "data_dir": "/data"}
    assert call(kernel, "visible") == ["echo.say", "echo.write_note", "echo.crash", "echo.hang"]


def test_ungranted_and_disabled_tools_are_refused(kernel: KernelProc) -> None:
    kernel.cli("revoke", "echoer", "tool:echo.crash")
    refused = call(kernel, "attempt", tool="echo.crash", args={})
    assert refused.startswith("permission_denied: echoer may not use the tool echo.crash")
    # Granted, but the user switched the tool off at install.
    assert kernel.cli("grant", "echoer", "tool:echo.write_note").returncode == 0
    disabled = call(kernel, "attempt", tool="echo.write_note", args={"text": "x"})
    assert disabled.startswith("tool_disabled: the tool echo.write_note is disabled by the user")
    kernel.cli_json("tools", "enable", "echo", "write_note")
    assert call(kernel, "attempt", tool="echo.write_note", args={"text": "x"}) == json.dumps("x\n")
    kernel.cli_json("tools", "disable", "echo", "write_note")
    assert call(kernel, "attempt", tool="echo.write_note", args={"text": "y"}).startswith("tool_disabled")


def test_arguments_are_checked_against_the_schema(kernel: KernelProc) -> None:
    bad = call(kernel, "attempt", tool="echo.say", args={"text": 5})
    assert bad.startswith("invalid_argument: echo.say: argument 'text': 5 is not of type 'string'")


def test_call_tool_cli_and_api(kernel: KernelProc) -> None:
    assert kernel.cli_json("call-tool", "echo", "say", '{"text": "yo"}')["result"]["text"] == "yo"
    done = kernel.cli("call-tool", "echo", "nope", "{}", "--json")
    assert done.returncode != 0
    assert json.loads(done.stdout or done.stderr)["error"]["code"] == "not_found"
    with kernel.client() as http:
        answer = http.post("/v1/tools/echo/say", json={"args": {"text": "api"}})
        assert answer.status_code == 200 and answer.json()["result"]["text"] == "api"
        entries = http.get("/v1/audit", params={"limit": 50}).json()
    calls = [e for e in entries if e["action"] == "tools.call" and e["target"] == "echo.say"]
    assert calls and {"args_bytes", "elapsed_ms", "outcome"} <= set(calls[0]["detail"])


def test_a_crashed_server_is_restarted_and_others_keep_working(kernel: KernelProc) -> None:
    kernel.cli("grant", "echoer", "tool:echo.crash")
    crashed = call(kernel, "attempt", tool="echo.crash", args={})
    assert crashed.startswith("worker_crashed: the echo tool server exited with status 7")
    assert call(kernel, "echo", text="again") == {"text": "again again", "data_dir": "/data"}


def test_a_hung_server_times_out_without_blocking_others(kernel: KernelProc) -> None:
    kernel.cli("grant", "echoer", "tool:echo.hang")
    hung = call(kernel, "attempt", tool="echo.hang", args={})
    assert hung.startswith("timeout: echo.hang did not answer within")
    assert call(kernel, "echo", text="after") == {"text": "after after", "data_dir": "/data"}


def test_upgrade_keeps_switches_and_uninstall_removes_the_server(kernel: KernelProc, tmp_path: Path) -> None:
    import shutil

    upgraded = tmp_path / "echo"
    shutil.copytree(BUNDLES / "echo", upgraded)
    manifest = upgraded / "agent.yaml"
    manifest.write_text(manifest.read_text().replace("version: 1.0.0", "version: 1.0.1"))
    listed = kernel.cli_json("install", str(upgraded), "--yes")
    assert listed["version"] == "1.0.1"
    assert {t["name"]: t["enabled"] for t in listed["tools"]}["write_note"] is False
    assert call(kernel, "echo", text="v2") == {"text": "v2 v2", "data_dir": "/data"}
    assert kernel.cli_json("tools", "uninstall", "echo")["uninstalled"] == "echo"
    gone = call(kernel, "attempt", tool="echo.say", args={"text": "x"})
    assert gone.startswith("not_found: you have no tool server named 'echo'")


@pytest.mark.parametrize(("mode", "says"), [("crash_on_start", "exited with status 3"), ("garbage", "not JSON-RPC")])
def test_a_server_that_fails_at_install_is_refused_clearly(kernel: KernelProc, tmp_path: Path, mode: str, says: str) -> None:
    import shutil

    bad = tmp_path / "broken"
    shutil.copytree(BUNDLES / "echo", bad)
    manifest = bad / "agent.yaml"
    text = manifest.read_text().replace("name: echo", "name: broken").replace("echo_server]", f"echo_server, {mode}]")
    manifest.write_text(text)
    done = kernel.cli("install", str(bad), "--yes", "--json")
    assert done.returncode != 0
    error = json.loads(done.stdout or done.stderr)["error"]
    assert error["code"] == "invalid_bundle" and says in error["message"]
    assert "broken" not in {s["name"] for s in kernel.cli_json("tools")}
    assert kernel.cli_json("call-tool", "calendar", "list_events")["result"] == {"events": []}


def test_colliding_tool_names_are_refused_by_name_and_the_rest_work(kernel: KernelProc, tmp_path: Path) -> None:
    import shutil

    twin = tmp_path / "twin"
    shutil.copytree(BUNDLES / "echo", twin)
    manifest = twin / "agent.yaml"
    manifest.write_text(manifest.read_text().replace("name: echo", "name: twin").replace("echo_server]", "echo_server, collide]"))
    done = kernel.cli("install", str(twin), "--yes")
    assert done.returncode == 0, done.stderr
    assert "more than one tool named 'say'" in done.stdout  # the review says so before approval
    refused = kernel.cli("call-tool", "twin", "say", '{"text": "x"}', "--json")
    error = json.loads(refused.stdout or refused.stderr)["error"]
    assert error["code"] == "conflict" and "twin declares more than one tool named 'say'" in error["message"]
    assert kernel.cli_json("call-tool", "twin", "write_note", '{"text": "ok"}')["result"] == "ok\n"


def test_build_of_a_tool_bundle_writes_tools_json(kernel: KernelProc, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "echo"
    shutil.copytree(BUNDLES / "echo", folder)
    done = kernel.cli("build", str(folder))
    assert done.returncode == 0, done.stderr
    written = json.loads((folder / "tools.json").read_text())
    assert [t["name"] for t in written["tools"]] == ["say", "write_note", "notify_flood", "crash", "hang"]
    assert written["tools"][0]["annotations"] == {"read_only_hint": True}
