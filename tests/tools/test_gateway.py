"""The MCP gateway at /mcp: an external mcp.Client with a user's token sees that user's
exported functions (and not another user's), calls grocery.add_items, and is refused
without a valid token."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest
from kernelproc import KernelProc, write_bundle
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

PRIVATE = '''
from dreamer.sdk import Context, function

@function(exported=True)
def secret_plan(ctx: Context) -> str:
    """Only bob has this."""
    return "bob's"
'''


def _client(kernel: KernelProc, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(f"{kernel.url}/mcp", http_client=http), cache=None)


async def _list_and_call(kernel: KernelProc, token: str) -> tuple[list[str], object, object, object]:
    async with _client(kernel, token) as client:
        listed = await client.list_tools()
        added = await client.call_tool("grocery.add_items", {"items": ["oat milk"]})
        missing = await client.call_tool("bob-agent.secret_plan", {})
        written = await client.call_tool("files.write_file", {"path": "mcp.txt", "text": "from an MCP client"})
    return [t.name for t in listed.tools], added, missing, written


@pytest.fixture(scope="module")
def bob_token(tool_kernel: KernelProc, tmp_path_factory: pytest.TempPathFactory) -> str:
    token = tool_kernel.cli_json("users", "add", "bob")["token"]
    bundle = write_bundle(tmp_path_factory.mktemp("bob"), "bob-agent", PRIVATE)
    done = tool_kernel.cli("install", str(bundle), "--yes", token=token)
    assert done.returncode == 0, done.stderr
    return token


def test_external_client_lists_the_users_functions_and_calls_one(tool_kernel: KernelProc, bob_token: str) -> None:
    names, added, missing, written = asyncio.run(_list_and_call(tool_kernel, tool_kernel.token))
    assert {"grocery.add_items", "grocery.list_items"} <= set(names)
    assert "bob-agent.secret_plan" not in names  # another user's agent
    assert not added.is_error, added
    assert "oat milk" in json.dumps(added.structured_content)
    assert missing.is_error and "not_found" in missing.content[0].text
    # The user's tools are there too, and run in the user's sandbox.
    assert {"files.write_file", "calendar.list_events", "web.fetch"} <= set(names)
    assert not written.is_error, written
    assert tool_kernel.cli_json("call-tool", "files", "read_file", '{"path": "mcp.txt"}')["result"]["text"] == "from an MCP client"
    items = tool_kernel.cli_json("call", "grocery", "list_items")["result"]
    assert "oat milk" in json.dumps(items)

    bob_names = asyncio.run(_names(tool_kernel, bob_token))
    assert "bob-agent.secret_plan" in bob_names


async def _names(kernel: KernelProc, token: str) -> list[str]:
    async with _client(kernel, token) as client:
        return [t.name for t in (await client.list_tools()).tools]


def test_confirm_functions_only_when_the_user_opts_in(tool_kernel: KernelProc) -> None:
    confirm = {
        f"{a['name']}.{f['name']}" for a in tool_kernel.cli_json("agents")
        for f in a["functions"] if f.get("confirm") and f.get("exported")
    }
    if not confirm:
        pytest.skip("no starter agent exports a confirm=True function")
    assert not confirm & set(asyncio.run(_names(tool_kernel, tool_kernel.token)))
    with tool_kernel.client() as http:
        assert http.put("/v1/gateway", json={"expose_confirm": True}).status_code == 200
    try:
        assert confirm <= set(asyncio.run(_names(tool_kernel, tool_kernel.token)))
    finally:
        with tool_kernel.client() as http:
            http.put("/v1/gateway", json={"expose_confirm": False})


def test_gateway_refuses_a_missing_or_wrong_token(tool_kernel: KernelProc) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    answer = httpx2.post(f"{tool_kernel.url}/mcp", json=body, timeout=10)
    assert answer.status_code == 401
    answer = httpx2.post(f"{tool_kernel.url}/mcp", json=body, headers={"Authorization": "Bearer nope"}, timeout=10)
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "unauthorized"
