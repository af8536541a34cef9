"""Issue 14, finding 7: optional scopes are off unless the user turns them on.

`--yes` approves the review; it does not switch anything on. `--grant SCOPE` (a switch in
the web review, which starts off) turns one optional scope on. The CLI review's "granted"
column says what the kernel then grants, as `dreamer permissions` does; starter agents,
installed without a review, hold no high-risk scope they do not require.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dreamer.contracts.archive import pack
from dreamer.contracts.scopes import parse_scope
from kernelproc import KernelProc, write_bundle

pytestmark = pytest.mark.timeout(600)  # a bound against a hang on a busy machine, not a timing

REPO = Path(__file__).resolve().parents[2]
SIMPLE = '''
from dreamer.sdk import Context, function

@function(exported=True)
def ping(ctx: Context) -> str:
    """Answers pong."""
    return "pong"
'''


def _granted_column(text: str) -> dict[str, str]:
    """scope → the review's "granted" cell, read from the table rows the CLI printed."""
    cells: dict[str, str] = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split("│")]
        if len(parts) >= 6 and parts[1] and parts[1] != "permission":
            cells[parts[1].removesuffix(" (new)")] = parts[5]
    return cells


def _permissions(kernel: KernelProc, agent: str, token: str | None = None) -> dict[str, bool]:
    return {r["scope"]: r["granted"] for r in kernel.cli_json("permissions", agent, token=token)}


def test_install_coder_with_yes_grants_no_optional_scope(accounts: tuple[KernelProc, str]) -> None:
    """The reproduction: `dreamer install agents/coder --yes` granted llm and net:* ("any website")."""
    kernel, _ = accounts
    done = kernel.cli("install", str(REPO / "agents" / "coder"), "--yes")
    assert done.returncode == 0, done.stderr + done.stdout
    shown = _granted_column(done.stdout)
    held = _permissions(kernel, "coder")
    assert held == {"llm": False, "net:*": False, "fs:*": False}
    # The review said the same thing as `dreamer permissions`, and how to change it.
    assert set(shown) == set(held)
    for scope, granted in held.items():
        assert shown[scope].startswith("yes" if granted else "no"), (scope, shown[scope])
    assert "--grant llm" in shown["llm"] and "dreamer grant coder fs:" in shown["fs:*"]
    assert "any website" in done.stdout  # what net:* would allow, in words


def test_grant_turns_on_exactly_what_it_names(accounts: tuple[KernelProc, str], tmp_path: Path) -> None:
    kernel, bob = accounts
    bundle = write_bundle(tmp_path, "chooser", SIMPLE, required=["notify"],
                          optional=["llm", "net:api.example.com", "memory:read", "fs.ro:*"])
    done = kernel.cli("install", str(bundle), "--yes", "--grant", "net:api.example.com", token=bob)
    assert done.returncode == 0, done.stderr + done.stdout
    assert _permissions(kernel, "chooser", bob) == {
        "notify": True, "llm": False, "net:api.example.com": True, "memory:read": False, "fs.ro:*": False,
    }


@pytest.mark.parametrize(("scope", "words"), [
    ("net:*", "does not ask for net:*"),  # broader than what it declares
    ("data:hr-demo", "does not ask for data:hr-demo"),
    ("fs.ro:*", "names no folder"),
])
def test_a_grant_it_does_not_offer_is_refused_and_nothing_installs(
    accounts: tuple[KernelProc, str], tmp_path: Path, scope: str, words: str
) -> None:
    kernel, bob = accounts
    name = "refused-" + str(abs(hash(scope)) % 10_000)
    bundle = write_bundle(tmp_path, name, SIMPLE, optional=["net:api.example.com", "fs.ro:*"])
    with kernel.client(bob) as c:
        staged = c.post("/v1/bundles", content=pack(bundle), headers={"Content-Type": "application/gzip"}).json()
        r = c.post("/v1/agents", json={"bundle_id": staged["bundle_id"], "approve": True, "grant": [scope]})
        assert r.status_code == 422 and words in r.json()["error"]["message"], r.text
        assert c.get(f"/v1/agents/{name}").status_code == 404


def test_an_upgrade_keeps_what_was_granted_and_leaves_new_optional_scopes_off(
    accounts: tuple[KernelProc, str], tmp_path: Path
) -> None:
    kernel, bob = accounts
    one = write_bundle(tmp_path / "v1", "grower", SIMPLE, optional=["notify"], version="1.0.0")
    two = write_bundle(tmp_path / "v2", "grower", SIMPLE, optional=["notify", "net:*"], required=["schedule"],
                       version="1.1.0")
    assert kernel.cli("install", str(one), "--yes", "--grant", "notify", token=bob).returncode == 0
    done = kernel.cli("install", str(two), "--yes", token=bob)
    assert done.returncode == 0, done.stderr
    assert _granted_column(done.stdout)["net:*"].startswith("no")
    assert _permissions(kernel, "grower", bob) == {"schedule": True, "notify": True, "net:*": False}


def test_the_api_grants_no_optional_scope_unless_named(accounts: tuple[KernelProc, str], tmp_path: Path) -> None:
    kernel, bob = accounts
    bundle = write_bundle(tmp_path, "quiet", SIMPLE, optional=["llm", "notify", "net:*"])
    with kernel.client(bob) as c:
        staged = c.post("/v1/bundles", content=pack(bundle), headers={"Content-Type": "application/gzip"}).json()
        review = {row["scope"]: row for row in staged["review"]["scopes"]}
        assert not any(row["granted_by_default"] for row in review.values())
        assert review["net:*"]["sentence"] == "Send and receive data over the internet to any website"
        installed = c.post("/v1/agents", json={"bundle_id": staged["bundle_id"], "approve": True}).json()
    assert installed["grants"] == []


def test_starters_hold_no_high_risk_scope_they_do_not_require(accounts: tuple[KernelProc, str]) -> None:
    kernel, _ = accounts
    erin = kernel.cli_json("users", "add", "erin")
    assert isinstance(erin, dict)
    rows = kernel.cli_json("permissions", token=erin["token"])
    assert isinstance(rows, list) and rows
    unseen = [(r["agent"], r["scope"]) for r in rows
              if r["granted"] and not r["required"] and (r["risk"] == "high" or r["scope"] == "llm")]
    assert unseen == []
    # Whatever optional scope a starter holds was judged harmless by one rule, not per agent.
    held = [r["scope"] for r in rows if r["granted"] and not r["required"]]
    assert all(parse_scope(s).risk != "high" for s in held), json.dumps(held)
