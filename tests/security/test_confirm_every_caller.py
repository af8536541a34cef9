"""Issue 14, finding 8: a function marked confirm=True runs only with the user's confirmation,
whoever calls it.

The CLI asks (or needs --yes), the HTTP API needs "confirm": true, Sidekick asks in the chat,
a trigger may not run one at all, and an agent's call is refused unless the user approved that
very function for that very caller (the grant `agent:<callee>.<function>!confirm`, which a
manifest may only ask for as optional and no install grants by itself).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dreamer.contracts.archive import pack
from kernelproc import KernelProc, write_bundle

pytestmark = pytest.mark.timeout(600)  # a bound against a hang on a busy machine, not a timing

VAULT = '''
from dreamer.sdk import Context, function

@function(exported=True)
def put(ctx: Context, text: str) -> None:
    """Keep a line."""
    ctx.db.execute("CREATE TABLE IF NOT EXISTS lines (text TEXT)")
    ctx.db.execute("INSERT INTO lines VALUES (?)", (text,))

@function(exported=True)
def lines(ctx: Context) -> list:
    """Every line."""
    ctx.db.execute("CREATE TABLE IF NOT EXISTS lines (text TEXT)")
    return [r[0] for r in ctx.db.execute("SELECT text FROM lines")]

@function(exported=True, confirm=True)
def wipe(ctx: Context) -> str:
    """Delete every line."""
    ctx.db.execute("CREATE TABLE IF NOT EXISTS lines (text TEXT)")
    ctx.db.execute("DELETE FROM lines")
    return "wiped"

@function(exported=True, confirm=True)
def burn(ctx: Context) -> str:
    """Delete the table."""
    ctx.db.execute("DROP TABLE IF EXISTS lines")
    return "burnt"
'''

CALLER = '''
from dreamer.sdk import CallError, Context, function

@function(exported=True)
def reach(ctx: Context, agent: str, fn: str) -> dict:
    """Call another agent's function and say what happened."""
    try:
        return {"value": ctx.call(agent, fn)}
    except CallError as e:
        return {"refused": e.kind, "message": e.message}
'''


def _install(kernel: KernelProc, folder: Path, *, grant: list[str] | None = None) -> dict:
    with kernel.client() as c:
        staged = c.post("/v1/bundles", content=pack(folder), headers={"Content-Type": "application/gzip"})
        assert staged.status_code == 201, staged.text
        done = c.post("/v1/agents", json={"bundle_id": staged.json()["bundle_id"], "approve": True, "grant": grant or []})
        assert done.status_code == 201, done.text
        return done.json()


def _post(kernel: KernelProc, agent: str, function: str, body: dict) -> tuple[int, dict]:
    with kernel.client() as c:
        r = c.post(f"/v1/agents/{agent}/functions/{function}", json=body)
    return r.status_code, r.json()


def _reach(kernel: KernelProc, caller: str, agent: str, fn: str) -> dict:
    status, body = _post(kernel, caller, "reach", {"args": {"agent": agent, "fn": fn}})
    assert status == 200, body
    return body["result"]


def _items(kernel: KernelProc) -> list:
    status, body = _post(kernel, "grocery", "list_items", {"args": {}})
    assert status == 200, body
    return body["result"]["items"]


def _grocery_with(kernel: KernelProc, *items: str) -> None:
    status, body = _post(kernel, "grocery", "add_items", {"args": {"items": list(items)}})
    assert status == 200, body


def test_an_agent_holding_agent_grocery_cannot_clear_the_list(accounts: tuple[KernelProc, str], tmp_path: Path) -> None:
    """The reproduction, then the user's approval of exactly that function for exactly that caller."""
    kernel, _ = accounts
    _install(kernel, write_bundle(tmp_path / "a", "sweeper", CALLER, required=["agent:grocery"]))
    _install(kernel, write_bundle(tmp_path / "b", "other-sweeper", CALLER, required=["agent:grocery"]))
    _grocery_with(kernel, "sweeper-proof milk")

    refused = _reach(kernel, "sweeper", "grocery", "clear")
    assert refused["refused"] == "permission_denied", refused
    assert "agent:grocery.clear!confirm" in refused["message"] and "confirmation" in refused["message"]
    assert "sweeper-proof milk" in json.dumps(_items(kernel))
    assert _reach(kernel, "sweeper", "grocery", "list_items")["value"]["items"]  # the ordinary grant still works

    # The user approves clear for sweeper (sweeper declares agent:grocery, which admits it).
    approved = kernel.cli("grant", "sweeper", "agent:grocery.clear!confirm", "--json")
    assert approved.returncode == 0, approved.stderr + approved.stdout
    assert _reach(kernel, "sweeper", "grocery", "clear")["value"]["count"] >= 1
    assert _items(kernel) == []

    # The approval is for that caller only.
    _grocery_with(kernel, "still here")
    assert _reach(kernel, "other-sweeper", "grocery", "clear")["refused"] == "permission_denied"
    assert "still here" in json.dumps(_items(kernel))

    # Taking back the call takes back the approval with it.
    assert kernel.cli("revoke", "sweeper", "agent:grocery", "--json").returncode == 0
    assert kernel.cli("grant", "sweeper", "agent:grocery", "--json").returncode == 0
    assert _reach(kernel, "sweeper", "grocery", "clear")["refused"] == "permission_denied"
    assert "still here" in json.dumps(_items(kernel))


def test_a_grant_of_the_exact_function_is_not_an_approval(accounts: tuple[KernelProc, str], tmp_path: Path) -> None:
    kernel, _ = accounts
    _install(kernel, write_bundle(tmp_path / "v", "vault", VAULT))
    _install(kernel, write_bundle(tmp_path / "c", "pry", CALLER, required=["agent:vault.wipe", "agent:vault.burn"],
                                  optional=["agent:vault.wipe!confirm"]))
    _post(kernel, "vault", "put", {"args": {"text": "precious"}})
    # Declared as optional, and still off after an approved install.
    grants = next(a for a in kernel.cli_json("agents") if a["name"] == "pry")["grants"]
    assert "agent:vault.wipe!confirm" not in grants
    for fn in ("wipe", "burn"):
        refused = _reach(kernel, "pry", "vault", fn)
        assert refused["refused"] == "permission_denied" and f"agent:vault.{fn}!confirm" in refused["message"]
    rows = {r["scope"]: r for r in kernel.cli_json("permissions", "pry")}
    assert rows["agent:vault.wipe!confirm"]["granted"] is False and rows["agent:vault.wipe!confirm"]["risk"] == "high"
    assert "without asking you first" in rows["agent:vault.wipe!confirm"]["sentence"]

    assert kernel.cli("grant", "pry", "agent:vault.wipe!confirm", "--json").returncode == 0
    assert _reach(kernel, "pry", "vault", "wipe")["value"] == "wiped"
    # An approval of wipe is not one of burn.
    assert _reach(kernel, "pry", "vault", "burn")["refused"] == "permission_denied"


def test_a_manifest_cannot_require_running_confirm_functions_unasked(
    accounts: tuple[KernelProc, str], tmp_path: Path
) -> None:
    kernel, _ = accounts
    greedy = write_bundle(tmp_path, "greedy", CALLER, required=["agent:grocery.clear!confirm"])
    with kernel.client() as c:
        r = c.post("/v1/bundles", content=pack(greedy), headers={"Content-Type": "application/gzip"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_bundle"
    assert "can only be optional" in r.json()["error"]["message"]


def test_the_http_api_needs_an_explicit_confirmation(accounts: tuple[KernelProc, str], tmp_path: Path) -> None:
    kernel, _ = accounts
    _install(kernel, write_bundle(tmp_path, "vault-api", VAULT))
    _post(kernel, "vault-api", "put", {"args": {"text": "keep me"}})
    for body in ({"args": {}}, {"args": {}, "confirm": False}):
        status, answer = _post(kernel, "vault-api", "wipe", body)
        assert status == 409 and answer["error"]["code"] == "confirmation_required", answer
        assert '"confirm": true' in answer["error"]["message"]
    assert _post(kernel, "vault-api", "lines", {"args": {}})[1]["result"] == ["keep me"]
    status, answer = _post(kernel, "vault-api", "wipe", {"args": {}, "confirm": True})
    assert status == 200 and answer["result"] == "wiped"
    assert _post(kernel, "vault-api", "lines", {"args": {}})[1]["result"] == []


def test_the_cli_asks_or_needs_yes(accounts: tuple[KernelProc, str]) -> None:
    kernel, _ = accounts
    _grocery_with(kernel, "cli milk")
    refused = kernel.cli("call", "grocery", "clear", "--json")  # no terminal, no --yes
    assert refused.returncode != 0
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "confirmation_required" and "--yes" in error["message"]
    assert "cli milk" in json.dumps(_items(kernel))
    declined = kernel.cli("call", "grocery", "clear", input="n\n")
    assert declined.returncode != 0 and "cli milk" in json.dumps(_items(kernel))
    done = kernel.cli_json("call", "grocery", "clear", "--yes")
    assert isinstance(done, dict) and done["result"]["count"] >= 1
    assert _items(kernel) == []


def test_sidekick_asks_before_it_clears(accounts: tuple[KernelProc, str]) -> None:
    kernel, _ = accounts
    _grocery_with(kernel, "chat milk")
    asked = kernel.cli("chat", "clear my grocery list", "--json", "--new")
    assert asked.returncode == 0, asked.stderr
    out = json.loads(asked.stdout)
    assert out["pending"] is not None and not out["calls"]
    assert "chat milk" in json.dumps(_items(kernel))
    yes = json.loads(kernel.cli("chat", "yes", "--json").stdout)
    assert [(c["function"], c["ok"]) for c in yes["calls"]] == [("clear", True)]
    assert _items(kernel) == []


def test_a_trigger_may_not_run_a_confirm_function(accounts: tuple[KernelProc, str], tmp_path: Path) -> None:
    kernel, _ = accounts
    folder = write_bundle(tmp_path, "nightly-wipe", VAULT, required=["schedule"])
    manifest = folder / "agent.yaml"
    manifest.write_text(manifest.read_text() + 'triggers:\n  - {type: cron, schedule: "0 3 * * *", entrypoint: wipe, name: nightly}\n')
    with kernel.client() as c:
        r = c.post("/v1/bundles", content=pack(folder), headers={"Content-Type": "application/gzip"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_bundle", r.text
    assert "confirm" in r.json()["error"]["message"]
