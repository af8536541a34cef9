"""The kernel spine end to end: the issue's 'done when', through the real CLI and a real kernel."""

from __future__ import annotations

import json
from pathlib import Path

from kernelproc import KernelProc


def _items(kernel: KernelProc, token: str | None = None) -> list[str]:
    out = kernel.cli_json("call", "grocery", "list_items", token=token)
    result = out["result"]
    items = result["items"] if isinstance(result, dict) else result
    return [i["name"] if isinstance(i, dict) else i for i in items]


def test_starter_agents_are_listed_with_the_contract_shape(kernel: KernelProc) -> None:
    agents = {a["name"]: a for a in kernel.cli_json("agents")}
    assert {"grocery", "recipes"} <= set(agents)
    add = next(f for f in agents["grocery"]["functions"] if f["name"] == "add_items")
    assert add["exported"] is True and add["background"] is False
    assert add["parameters"]["properties"]["items"]["type"] == "array"
    clear = next(f for f in agents["grocery"]["functions"] if f["name"] == "clear")
    assert clear["confirm"] is True
    assert agents["recipes"]["grants"] == ["agent:grocery.add_items"]
    # Starters are installed without a review: nothing high-risk or costly is granted.
    assert not {"net:*", "llm"} & set(agents["notes"]["grants"])
    assert set(agents["calendar"]["grants"]) == {"agent:notes.search", "agent:grocery.list_items", "tool:calendar.list_events"}
    for key in ("name", "version", "kind", "functions", "grants"):
        assert key in agents["recipes"]


def test_add_then_list_shows_milk(kernel: KernelProc) -> None:
    out = kernel.cli_json("call", "grocery", "add_items", '{"items": ["milk"]}')
    assert out["invocation_id"].startswith("inv_")
    assert "milk" in [i.lower() for i in _items(kernel)]


def test_plan_dinner_puts_ingredients_on_the_list_then_revoke_stops_it(kernel: KernelProc) -> None:
    kernel.cli_json("call", "grocery", "clear", "--yes")
    planned = kernel.cli_json("call", "recipes", "plan_dinner")["result"]
    listed = {i.lower() for i in _items(kernel)}
    recipe = planned.get("recipe", planned)
    ingredients = {i.lower() for i in recipe["ingredients"]}
    assert ingredients and ingredients <= listed

    revoked = kernel.cli("revoke", "recipes", "agent:grocery")
    assert revoked.returncode == 0, revoked.stderr
    kernel.cli_json("call", "grocery", "clear", "--yes")
    before = _items(kernel)

    denied = kernel.cli("call", "recipes", "plan_dinner", "--json")
    assert denied.returncode != 0
    error = json.loads(denied.stdout)["error"]
    assert error["code"] == "permission_denied"
    assert "agent:grocery.add_items" in error["message"]
    plain = kernel.cli("call", "recipes", "plan_dinner")
    assert plain.returncode != 0 and "agent:grocery.add_items" in plain.stderr
    assert "Traceback" not in plain.stderr
    assert _items(kernel) == before

    audit = kernel.cli_json("audit", "--limit", "200")
    calls = [e for e in audit if e["action"] == "agents.call" and e["target"] == "grocery.add_items"]
    assert {e["decision"] for e in calls} == {"allow", "deny"}
    verified = kernel.cli_json("audit", "verify")
    assert verified["ok"] is True and verified["entries"] > 0
    assert kernel.cli("audit", "verify").returncode == 0

    regranted = kernel.cli("grant", "recipes", "agent:grocery")
    assert regranted.returncode == 0, regranted.stderr
    kernel.cli_json("call", "recipes", "plan_dinner")


def test_init_install_call(kernel: KernelProc, tmp_path: Path) -> None:
    made = kernel.cli("init", "hello", "--dir", str(tmp_path / "hello"))
    assert made.returncode == 0, made.stderr
    installed = kernel.cli("install", str(tmp_path / "hello"), "--yes")
    assert installed.returncode == 0, installed.stderr + installed.stdout
    out = kernel.cli_json("call", "hello", "hello", '{"name": "Ada"}')
    assert "Ada" in json.dumps(out["result"])


def test_call_errors_are_one_sentence(kernel: KernelProc) -> None:
    cases = [
        (["call", "nosuch", "f"], "not_found"),
        (["call", "grocery", "nosuch"], "not_found"),
        (["call", "grocery", "add_items", '{"items": "milk"}'], "invalid_argument"),
        (["call", "grocery", "add_items", '{"itemz": ["milk"]}'], "invalid_argument"),
    ]
    for args, code in cases:
        done = kernel.cli(*args, "--json")
        assert done.returncode != 0, args
        assert json.loads(done.stdout)["error"]["code"] == code, (args, done.stdout)
        plain = kernel.cli(*args)
        assert plain.returncode != 0 and "Traceback" not in plain.stderr and plain.stderr.strip(), args
    bad_json = kernel.cli("call", "grocery", "add_items", "{not json", "--json")
    assert bad_json.returncode != 0
    assert json.loads(bad_json.stdout)["error"]["message"]


def test_openapi_and_health(kernel: KernelProc) -> None:
    with kernel.client() as c:
        spec = c.get("/openapi.json").json()
        assert "/v1/agents/{agent}/functions/{function}" in spec["paths"]
        assert c.get("/healthz").json()["ok"] is True
        assert c.get("/v1/agents", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_hostile_requests_get_one_sentence(kernel: KernelProc) -> None:
    with kernel.client() as c:
        big = c.post("/v1/agents/grocery/functions/add_items", json={"args": {"items": ["x" * 1000] * 6000}})
        assert big.status_code == 413 and big.json()["error"]["code"] == "payload_too_large"

        def chunks():
            for _ in range(6000):
                yield b"x" * 1000

        streamed = c.post("/v1/agents/grocery/functions/list_items", content=chunks(),
                          headers={"Content-Type": "application/json"})
        assert streamed.status_code == 413
        not_json = c.post("/v1/agents/grocery/functions/list_items", content=b"{nope",
                          headers={"Content-Type": "application/json"})
        assert not_json.status_code == 400 and not_json.json()["error"]["code"] == "invalid_request"
        wrong_shape = c.post("/v1/agents/grocery/functions/list_items", json={"args": [1, 2]})
        assert wrong_shape.status_code == 400
        extra = c.post("/v1/agents/grocery/functions/list_items", json={"args": {}, "sudo": True})
        assert extra.status_code == 400
        surrogate = c.post("/v1/agents/grocery/functions/add_items",
                           content=b'{"args": {"items": ["\\ud800 milk\\u0000"]}}',
                           headers={"Content-Type": "application/json"})
        assert surrogate.status_code == 422 and "Unicode" in surrogate.json()["error"]["message"]
        nan = c.post("/v1/agents/grocery/functions/add_items", content=b'{"args": {"items": [NaN]}}',
                     headers={"Content-Type": "application/json"})
        assert nan.status_code in (400, 422) and nan.json()["error"]["message"]
        assert c.post("/v1/bundles", content=b"").json()["error"]["code"] == "invalid_bundle"
        assert c.get("/healthz").status_code == 200
