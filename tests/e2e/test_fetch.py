"""ctx.fetch through a real kernel: grants, the address rules, redirects, caps, revocation, audit.

Agents run in bwrap sandboxes without a network; the kernel fetches for them from
a local HTTP server on 127.0.0.1 (tests/net/localhttp.py). Nothing leaves the machine.
"""

from __future__ import annotations

import base64
import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kernelproc import KernelProc, write_bundle

sys.path.insert(0, str(Path(__file__).parents[1] / "net"))
from localhttp import LocalServer, local_server

CODE = '''
import base64
import socket

from dreamer.sdk import CallError, Context, function


@function(exported=True)
def get(ctx: Context, url: str, method: str = "GET", headers: dict[str, str] | None = None,
        body: str | None = None, body_b64: str | None = None, timeout: float = 10,
        max_bytes: int | None = None) -> dict:
    """Fetches a URL; reports the response, or the refusal."""
    payload = base64.b64decode(body_b64) if body_b64 is not None else body
    try:
        r = ctx.fetch(url, method=method, headers=headers, body=payload, timeout=timeout, max_bytes=max_bytes)
    except CallError as e:
        return {"error": e.kind, "message": e.message}
    return {"status": r.status, "ok": r.ok, "headers": r.headers, "text": r.text,
            "b64": base64.b64encode(r.content).decode(), "url": r.url}


@function
def get_json(ctx: Context, url: str) -> dict:
    """Fetches JSON and returns it parsed."""
    return ctx.fetch(url).json()


@function
def size(ctx: Context, url: str) -> int:
    """Fetches a URL and returns how many bytes came back."""
    return len(ctx.fetch(url).content)


@function
def uncaught(ctx: Context, url: str) -> str:
    """Lets a fetch error end the invocation."""
    ctx.fetch(url)
    return "unreachable"


@function
def direct(ctx: Context, port: int) -> str:
    """Tries the network without the kernel."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError as e:
        return "no network: " + type(e).__name__
    return "connected"
'''

AGENTS = {
    "net-fetcher": ["net:127.0.0.1", "net:localhost"],
    "net-wild": ["net:*"],
    "net-offline": [],
    "net-revoked": ["net:127.0.0.1"],
}


@pytest.fixture(scope="module")
def web() -> Iterator[LocalServer]:
    with local_server() as server:
        yield server


@pytest.fixture(scope="module")
def kernel_with_agents(kernel: KernelProc, tmp_path_factory: pytest.TempPathFactory) -> KernelProc:
    root = tmp_path_factory.mktemp("net-agents")
    for name, scopes in AGENTS.items():
        done = kernel.cli("install", str(write_bundle(root, name, CODE, required=scopes)), "--yes")
        assert done.returncode == 0, done.stderr + done.stdout
    return kernel


@pytest.fixture(scope="module")
def api(kernel_with_agents: KernelProc) -> Iterator[httpx.Client]:
    with kernel_with_agents.client() as client:
        yield client


def call(api: httpx.Client, agent: str, function: str, **args: Any) -> Any:
    answer = api.post(f"/v1/agents/{agent}/functions/{function}", json={"args": args})
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


def fetch(api: httpx.Client, agent: str, url: str, **args: Any) -> dict[str, Any]:
    return call(api, agent, "get", url=url, **args)


def test_text_json_and_binary_bodies(api: httpx.Client, web: LocalServer) -> None:
    text = fetch(api, "net-fetcher", web.url("/text"))
    assert (text["status"], text["ok"], text["text"]) == (200, True, "hello from the test server")
    assert text["headers"]["content-type"] == "text/plain; charset=utf-8" and text["url"] == web.url("/text")
    assert call(api, "net-fetcher", "get_json", url=web.url("/json")) == {"ok": True, "n": 1}
    binary = fetch(api, "net-fetcher", web.url("/binary"))
    assert base64.b64decode(binary["b64"]) == bytes(range(256))
    assert fetch(api, "net-fetcher", web.url("/latin1"))["text"] == "café"
    missing = fetch(api, "net-fetcher", web.url("/status/404"))
    assert (missing["status"], missing["ok"], missing["text"]) == (404, False, "status page")


def test_methods_headers_and_bodies_reach_the_server(api: httpx.Client, web: LocalServer) -> None:
    headers = {"X-Test": "yes", "Host": "evil.example", "Connection": "upgrade", "Upgrade": "h2c"}
    echo = fetch(api, "net-fetcher", web.url("/echo?a=1"), method="PUT", headers=headers,
                 body_b64=base64.b64encode(b"\x00\xffbytes").decode())
    seen = json.loads(echo["text"])
    assert seen["method"] == "PUT" and seen["path"] == "/echo?a=1" and seen["body"] == "\x00\xffbytes"
    assert seen["headers"]["X-Test"] == "yes" and seen["headers"]["Host"] == f"127.0.0.1:{web.port}"
    assert "Upgrade" not in seen["headers"]
    head = fetch(api, "net-fetcher", web.url("/text"), method="HEAD")
    assert head["status"] == 200 and head["text"] == ""


def test_a_redirect_to_a_granted_host_is_followed(api: httpx.Client, web: LocalServer) -> None:
    web.seen.clear()
    to = web.url("/text", host="localhost")
    out = fetch(api, "net-fetcher", web.url(f"/redirect?to={to}"))
    assert out["status"] == 200 and out["url"] == to and out["text"] == "hello from the test server"
    assert web.paths() == [f"/redirect?to={to}", "/text"]


def test_a_redirect_to_an_ungranted_host_is_refused(api: httpx.Client, web: LocalServer) -> None:
    web.seen.clear()
    out = fetch(api, "net-fetcher", web.url(f"/redirect?to=http://127.0.0.2:{web.port}/text&status=307"))
    assert out["error"] == "permission_denied"
    assert "net:127.0.0.2" in out["message"]
    assert web.paths() == [f"/redirect?to=http://127.0.0.2:{web.port}/text&status=307"]


def test_endless_redirects_stop(api: httpx.Client, web: LocalServer) -> None:
    web.seen.clear()
    out = fetch(api, "net-fetcher", web.url("/loop"))
    assert out["error"] == "fetch_failed" and "more than 5" in out["message"]
    assert web.paths() == ["/loop"] * 6


def test_a_response_over_max_bytes_is_refused(api: httpx.Client, web: LocalServer) -> None:
    assert fetch(api, "net-fetcher", web.url("/big?n=100000"), max_bytes=1000)["error"] == "payload_too_large"
    assert fetch(api, "net-fetcher", web.url("/stream?n=3000000"), max_bytes=100000)["error"] == "payload_too_large"
    assert len(base64.b64decode(fetch(api, "net-fetcher", web.url("/big?n=1000"), max_bytes=1000)["b64"])) == 1000


def test_a_large_response_reaches_the_agent(api: httpx.Client, web: LocalServer) -> None:
    # Larger than a worker may send the kernel (8 MiB once in base64): answers may be.
    assert call(api, "net-fetcher", "size", url=web.url("/big?n=7000000")) == 7_000_000


def test_a_slow_server_times_out_and_the_agent_can_handle_it(api: httpx.Client, web: LocalServer) -> None:
    out = fetch(api, "net-fetcher", web.url("/slow?s=4"), timeout=0.5)
    assert out["error"] == "timeout"


def test_a_wildcard_grant_never_reaches_loopback(api: httpx.Client, web: LocalServer) -> None:
    web.seen.clear()
    for url in (web.url("/text"), web.url("/text", host="localhost"), f"http://0x7f.1:{web.port}/text",
                f"http://[::ffff:127.0.0.1]:{web.port}/text", f"http://[::1]:{web.port}/text"):
        out = fetch(api, "net-wild", url)
        assert out["error"] == "permission_denied", url
        assert "loopback" in out["message"], out
    assert web.seen == []


def test_no_grant_is_refused_before_any_lookup(api: httpx.Client, web: LocalServer) -> None:
    web.seen.clear()
    out = fetch(api, "net-offline", web.url("/text"))
    assert out["error"] == "permission_denied"
    # net-offline's manifest asks for no net: scope, so the fix is the agent.yaml line.
    assert "add `net:127.0.0.1` under `permissions:` in agent.yaml" in out["message"]
    assert web.seen == []


def test_revoking_the_grant_takes_effect_on_the_next_fetch(api: httpx.Client, web: LocalServer) -> None:
    assert fetch(api, "net-revoked", web.url("/text"))["status"] == 200
    api.delete("/v1/agents/net-revoked/grants", params={"scope": "net:127.0.0.1"}).raise_for_status()
    assert fetch(api, "net-revoked", web.url("/text"))["error"] == "permission_denied"
    api.post("/v1/agents/net-revoked/grants", json={"scope": "net:127.0.0.1"}).raise_for_status()
    assert fetch(api, "net-revoked", web.url("/text"))["status"] == 200


def test_every_request_is_audited_without_its_secrets(api: httpx.Client, web: LocalServer) -> None:
    fetch(api, "net-fetcher", web.url("/text?api_key=SECRET123"), headers={"Authorization": "Bearer TOKEN456"})
    fetch(api, "net-wild", web.url("/json?api_key=SECRET123"))
    entries = api.get("/v1/audit", params={"limit": 200}).json()
    mine = [e for e in entries if "/text?" in e["target"] and e["actor"] == "agent:net-fetcher"]
    check, outcome = (next(e for e in mine if e["action"] == a) for a in ("net.fetch", "net.response"))
    assert check["decision"] == "allow" and check["scope"] == "net:127.0.0.1"
    assert check["target"] == f"GET http://127.0.0.1:{web.port}/text?…"
    assert outcome["detail"]["status"] == 200 and outcome["detail"]["bytes"] == 26
    assert outcome["detail"]["address"] == "127.0.0.1"
    denied = next(e for e in entries if e["actor"] == "agent:net-wild" and e["decision"] == "deny")
    assert denied["action"] == "net.fetch" and "loopback" in denied["detail"]["reason"]
    assert "SECRET123" not in str(entries) and "TOKEN456" not in str(entries)
    assert api.get("/v1/audit/verify").json()["ok"] is True


def test_an_uncaught_fetch_error_keeps_its_kind(api: httpx.Client) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))  # bound but not listening: connections are refused
        port = s.getsockname()[1]
        answer = api.post("/v1/agents/net-fetcher/functions/uncaught", json={"args": {"url": f"http://127.0.0.1:{port}/"}})
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert error["code"] == "fetch_failed" and "connection refused" in error["message"]


def test_bad_urls_are_invalid_arguments(api: httpx.Client) -> None:
    for url in ("file:///etc/passwd", "http://user:pw@127.0.0.1/", "gopher://127.0.0.1/"):
        assert fetch(api, "net-fetcher", url)["error"] == "invalid_argument", url


def test_agents_have_no_network_of_their_own(api: httpx.Client, web: LocalServer) -> None:
    assert call(api, "net-fetcher", "direct", port=web.port).startswith("no network")
