"""Tokens and sessions can be revoked, and revoking ends what they hold open (issue 24, finding 7).

A real kernel: `dreamer tokens list|create|revoke`, `dreamer users remove`; an open
/v1/invocations/ID/logs stream (which stays open as long as its run) ends at once when
the token, the browser session or the user that opened it goes away.
"""

from __future__ import annotations

import asyncio
import json
import queue
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from kernelproc import KernelProc, start_kernel, write_bundle
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.timeout(300)
SLOW = '''
import time
from dreamer.sdk import Context, function

@function(background=True)
def slow(ctx: Context) -> str:
    """Logs a line a second for a minute."""
    for i in range(60):
        ctx.log(f"tick {i}")
        time.sleep(1)
    return "done"
'''
WAITER = '''
import time
from dreamer.sdk import Context, function

@function(exported=True, examples=["wait a while with me"])
def wait(ctx: Context) -> str:
    """Waits 20 seconds, then answers."""
    time.sleep(20)
    return "waited"
'''
FUNCTIONS = {"format": 1, "functions": [{
    "name": "slow", "description": "Logs a line a second for a minute.",
    "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    "result": {"type": "string"}, "exported": False, "background": True, "confirm": False, "retries": 0,
    "examples": [],
}]}


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    root = tmp_path_factory.mktemp("revoke")
    k = start_kernel(root / "home", wait_s=240)
    bundle = write_bundle(root, "slow", SLOW)
    (bundle / "functions.json").write_text(json.dumps(FUNCTIONS))
    k.bundle = bundle  # type: ignore[attr-defined]
    k.waiter = write_bundle(root, "waiter", WAITER)  # type: ignore[attr-defined]
    yield k
    k.stop()


def _user(kernel: KernelProc, name: str) -> str:
    token = kernel.cli_json("users", "add", name)["token"]
    done = kernel.cli("install", str(kernel.bundle), "--yes", token=token)  # type: ignore[attr-defined]
    assert done.returncode == 0, done.stdout + done.stderr
    return token


def _start_slow(kernel: KernelProc, token: str) -> str:
    with kernel.client(token) as c:
        r = c.post("/v1/agents/slow/functions/slow", json={"args": {}})
    assert r.status_code == 200, r.text
    return r.json()["invocation_id"]


def _follow(kernel: KernelProc, run: str, **client_args: object) -> tuple[threading.Thread, queue.Queue[str]]:
    """Reads the run's log stream in a thread; each line read goes on the queue, then "<closed>"."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        try:
            with httpx.Client(base_url=kernel.url, timeout=httpx.Timeout(10, read=90), **client_args) as c:  # type: ignore[arg-type]
                with c.stream("GET", f"/v1/invocations/{run}/logs") as r:
                    for line in r.iter_lines():
                        lines.put(line)
        finally:
            lines.put("<closed>")

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, lines


def _wait_for(lines: queue.Queue[str], word: str, within: float) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        seen.append(line)
        if word in line:
            return seen
    raise AssertionError(f"{word!r} not seen within {within} s: {seen[-5:]}")


def test_tokens_list_create_revoke_and_an_open_stream_ends(kernel: KernelProc) -> None:
    first = _user(kernel, "alice")
    made = kernel.cli_json("tokens", "create", "--label", "laptop", token=first)
    second = made["token"]
    listed = kernel.cli_json("tokens", "list", token=first)
    assert [t["label"] for t in listed] == ["cli", "laptop"]
    assert second not in json.dumps(listed)
    run = _start_slow(kernel, second)
    _, lines = _follow(kernel, run, headers={"Authorization": f"Bearer {second}"})
    _wait_for(lines, "tick", 60)
    assert kernel.cli("tokens", "revoke", str(made["id"]), token=first).returncode == 0
    closing = _wait_for(lines, "<closed>", 30)  # at once, not when the run ends a minute later
    assert any("revoked" in line for line in closing), closing
    with kernel.client(second) as c:
        assert c.get("/v1/agents").status_code == 401
    with kernel.client(first) as c:  # the other token is untouched
        assert c.get("/v1/agents").status_code == 200
    # Someone else's token id is not found, not revoked.
    other = kernel.cli("tokens", "revoke", str(listed[0]["id"]), "--json")
    assert other.returncode != 0 and json.loads(other.stdout)["error"]["code"] == "not_found"


def test_a_password_change_ends_a_browser_sessions_stream(kernel: KernelProc) -> None:
    token = _user(kernel, "carol")
    with kernel.client(token) as c:
        assert c.put("/v1/users/carol/password", json={"password": "first horse"}).status_code == 200
    browser = httpx.Client(base_url=kernel.url, headers={"User-Agent": "b/1"}, timeout=30)
    form = browser.get("/login").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
    signed = browser.post("/login", data={"name": "carol", "password": "first horse", "csrf": csrf})
    assert signed.status_code == 303, signed.text
    cookie = browser.cookies.get("dreamer_session")
    run = _start_slow(kernel, token)
    _, lines = _follow(kernel, run, cookies={"dreamer_session": cookie}, headers={"User-Agent": "b/1"})
    _wait_for(lines, "tick", 60)
    with kernel.client(token) as c:
        assert c.put("/v1/users/carol/password", json={"password": "second horse"}).status_code == 200
    assert any("revoked" in line for line in _wait_for(lines, "<closed>", 10))
    browser.close()


def test_users_remove_says_what_happens_and_ends_their_streams(kernel: KernelProc, tmp_path: Path) -> None:
    token = _user(kernel, "bob")
    folder = kernel.home / "users" / "bob"
    run = _start_slow(kernel, token)
    _, lines = _follow(kernel, run, headers={"Authorization": f"Bearer {token}"})
    _wait_for(lines, "tick", 60)
    refused = kernel.cli("users", "remove", "bob", "--json")  # no terminal, no --yes
    assert refused.returncode != 0 and "--yes" in refused.stdout
    done = kernel.cli("users", "remove", "bob", "--yes")
    assert done.returncode == 0, done.stderr
    assert "tokens and sessions no longer work" in done.stdout and str(folder) in done.stdout
    assert any("revoked" in line for line in _wait_for(lines, "<closed>", 10))
    with kernel.client(token) as c:
        assert c.get("/v1/agents").status_code == 401
    assert "bob" not in {u["name"] for u in kernel.cli_json("users", "list")}
    assert folder.exists()  # kept without --purge
    # Removing yourself, or someone who does not exist, is refused in one sentence.
    me = kernel.cli("users", "remove", "me", "--yes", "--json")
    assert me.returncode != 0 and "yourself" in json.loads(me.stdout)["error"]["message"]
    ghost = kernel.cli("users", "remove", "nobody", "--yes", "--json")
    assert ghost.returncode != 0 and json.loads(ghost.stdout)["error"]["code"] == "not_found"
    # A user added later under the same name starts afresh; --purge deletes the files.
    kernel.cli_json("users", "add", "bob")
    assert kernel.cli("users", "remove", "bob", "--yes", "--purge").returncode == 0
    assert not folder.exists()


def test_revoking_a_token_ends_its_mcp_call_in_flight(kernel: KernelProc) -> None:
    """An MCP client waiting on a slow function through /mcp is cut off when its token goes."""
    first = _user(kernel, "dora")
    assert kernel.cli("install", str(kernel.waiter), "--yes", token=first).returncode == 0  # type: ignore[attr-defined]
    made = kernel.cli_json("tokens", "create", "--label", "mcp", token=first)

    async def call_then_revoke() -> BaseException | object:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {made['token']}"}, timeout=120)
        async with Client(streamable_http_client(f"{kernel.url}/mcp", http_client=http), cache=None) as client:
            assert "waiter.wait" in {t.name for t in (await client.list_tools()).tools}
            call = asyncio.ensure_future(client.call_tool("waiter.wait", {}))
            await asyncio.sleep(3)  # the call is running in the agent's worker
            assert not call.done()
            revoked = await asyncio.to_thread(kernel.cli, "tokens", "revoke", str(made["id"]), token=first)
            assert revoked.returncode == 0, revoked.stderr
            done, _ = await asyncio.wait({call}, timeout=60)
            assert call in done, "the MCP call was not ended when its token was revoked"
            return call.exception() or call.result()

    outcome = asyncio.run(call_then_revoke())
    # Not the function's answer 17 s later: the request was refused when the token went.
    assert isinstance(outcome, BaseException), f"the call still answered after its token was revoked: {outcome}"
    assert "error response" in str(outcome), repr(outcome)  # the client's words for the 401
    with kernel.client(made["token"]) as c:
        assert c.get("/v1/agents").status_code == 401


def test_revoking_a_token_ends_its_open_chat_stream(kernel: KernelProc) -> None:
    """A chat answer still streaming (Sidekick waits on a slow call) ends when its token goes."""
    first = _user(kernel, "erin")
    assert kernel.cli("install", str(kernel.waiter), "--yes", token=first).returncode == 0  # type: ignore[attr-defined]
    made = kernel.cli_json("tokens", "create", "--label", "chat", token=first)
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        try:
            with httpx.Client(base_url=kernel.url, timeout=httpx.Timeout(10, read=90),
                              headers={"Authorization": f"Bearer {made['token']}"}) as c:
                with c.stream("POST", "/v1/chat", json={"message": "wait a while with me"}) as r:
                    for line in r.iter_lines():
                        lines.put(line)
        finally:
            lines.put("<closed>")

    threading.Thread(target=read, daemon=True).start()
    _wait_for(lines, "event: tool_call", 60)  # the call has started: the stream is open on it
    assert kernel.cli("tokens", "revoke", str(made["id"]), token=first).returncode == 0
    closing = _wait_for(lines, "<closed>", 30)  # the call itself would answer 20 s after it began
    assert any("revoked" in line for line in closing), closing
    assert not any("waited" in line for line in closing), closing
