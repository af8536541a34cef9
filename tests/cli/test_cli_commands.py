"""Each command against a scripted kernel: what it sends, what it shows, when it refuses."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_scripted import ScriptedKernel
from typer.testing import Result

MANIFEST = {
    "name": "reviewed", "version": "1.0.0", "kind": "agent", "title": "Reviewed", "description": "A test agent.",
    "publisher": "tests", "entry": "reviewed.server",
    "permissions": {"required": ["notify"], "optional": ["llm", "net:api.example.com"]},
}
SCOPES = [
    {"scope": "notify", "sentence": "Post messages to your feed", "risk": "low", "required": True, "granted_by_default": True},
    {"scope": "llm", "sentence": "Use the AI model on your behalf (this can cost money)", "risk": "medium", "required": False, "granted_by_default": True},
    {"scope": "net:api.example.com", "sentence": "Send and receive data over the internet to api.example.com", "risk": "high", "required": False, "granted_by_default": True},
]
FUNCTIONS = [{"name": "ping", "description": "Answers pong.", "exported": True, "background": False, "confirm": False, "parameters": {}}]
AGENT = {"name": "reviewed", "version": "1.0.0", "kind": "agent", "functions": FUNCTIONS, "grants": ["net:api.example.com", "notify"]}


def staged(upgrade: dict[str, Any] | None = None) -> dict[str, Any]:
    review = {"name": "reviewed", "title": "Reviewed", "version": "1.0.0", "publisher": "tests",
              "publisher_verified": False, "scopes": SCOPES, "functions": FUNCTIONS}
    return {"bundle_id": "stg_1", "manifest": MANIFEST, "functions": FUNCTIONS, "review": review, "upgrade": upgrade}


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    folder = tmp_path / "reviewed"
    (folder / "reviewed").mkdir(parents=True)
    (folder / "reviewed" / "__init__.py").write_text("")
    (folder / "reviewed" / "server.py").write_text("X = 1\n")
    (folder / "agent.yaml").write_text(json.dumps(MANIFEST))  # JSON is YAML
    return folder


def cells(text: str, needle: str) -> list[str]:
    """The cells of the first table row that mentions needle."""
    line = next(line for line in text.splitlines() if needle in line)
    return [cell.strip() for cell in line.split("│")[1:-1]]


def _members(archive: bytes) -> set[str]:
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(archive))) as tar:
        return set(tar.getnames())


# -- install -----------------------------------------------------------------------------


def test_install_shows_the_review_and_refuses_without_yes_off_a_terminal(
    cli: Callable[..., Result], against: ScriptedKernel, bundle: Path
) -> None:
    against.on("POST", "/v1/bundles", (201, staged()))
    against.on("POST", "/v1/agents", (201, AGENT))
    done = cli("install", str(bundle))
    assert done.exit_code == 1
    assert "pass --yes to approve non-interactively" in done.stderr
    for shown in ("tests", "Post messages to your feed", "high", "required", "optional", "ping"):
        assert shown in done.stdout, shown
    upload = against.requests("POST", "/v1/bundles")[0]
    assert upload.headers["content-type"] == "application/gzip"
    assert {"agent.yaml", "reviewed/server.py"} <= _members(upload.body)
    assert against.requests("POST", "/v1/agents") == []


def test_install_with_yes_grants_only_what_is_turned_on(cli: Callable[..., Result], against: ScriptedKernel, bundle: Path) -> None:
    against.on("POST", "/v1/bundles", (201, staged()))
    against.on("POST", "/v1/agents", (201, AGENT))
    done = cli("install", str(bundle), "--yes", "--grant", "net:api.example.com")
    assert done.exit_code == 0, done.output
    assert against.requests("POST", "/v1/agents")[0].json() == {
        "bundle_id": "stg_1", "approve": True, "without": [], "grant": ["net:api.example.com"]}
    # llm was not turned on, so it is off, and the review says how to turn it on.
    assert cells(done.stdout, "AI model")[-1] == "no (turn on with --grant llm)"
    assert cells(done.stdout, "internet to api.example.com")[-1] == "yes"
    assert "Installed" in done.stdout and "dreamer call reviewed ping" in done.stdout


def test_install_json_prints_the_installed_agent(cli: Callable[..., Result], against: ScriptedKernel, bundle: Path) -> None:
    against.on("POST", "/v1/bundles", (201, staged()))
    against.on("POST", "/v1/agents", (201, AGENT))
    done = cli("install", str(bundle), "--yes", "--json")
    assert done.exit_code == 0
    assert json.loads(done.stdout) == AGENT
    # The review still reaches the person, on stderr.
    assert "Post messages to your feed" in done.stderr


@pytest.mark.parametrize(("scope", "words"), [("notify", "is required by reviewed"), ("fs:/home", "does not ask for fs:/home")])
def test_without_is_checked_before_asking(
    cli: Callable[..., Result], against: ScriptedKernel, bundle: Path, scope: str, words: str
) -> None:
    against.on("POST", "/v1/bundles", (201, staged()))
    done = cli("install", str(bundle), "--yes", "--without", scope, "--json")
    assert done.exit_code == 1
    assert words in json.loads(done.stdout)["error"]["message"]
    assert against.requests("POST", "/v1/agents") == []


def test_upgrade_shows_the_difference(cli: Callable[..., Result], against: ScriptedKernel, bundle: Path) -> None:
    upgrade = {"from_version": "0.9.0", "to_version": "1.0.0", "scopes_added": [SCOPES[2]], "scopes_removed": ["memory:read"],
               "functions_added": ["ping"], "functions_removed": ["old"], "needs_approval": True, "kept_grants": ["notify"]}
    against.on("POST", "/v1/bundles", (201, staged(upgrade)))
    done = cli("install", str(bundle))
    assert done.exit_code == 1 and "--yes" in done.stderr
    text = done.stdout
    assert "Upgrade from 0.9.0 to 1.0.0" in text
    assert "New permissions: net:api.example.com" in text and "Dropped permissions: memory:read" in text
    assert "New functions: ping" in text and "Removed functions: old" in text
    # llm was declined before and is not new: the upgrade keeps it off; the new optional scope starts off too.
    assert cells(text, "AI model")[-1] == "no (turn on with --grant llm)"
    assert cells(text, "internet to api.example.com")[0] == "net:api.example.com (new)"
    assert cells(text, "internet to api.example.com")[-1] == "no (turn on with --grant net:api.example.com)"


def test_upgrade_asking_nothing_new_needs_no_approval(cli: Callable[..., Result], against: ScriptedKernel, bundle: Path) -> None:
    upgrade = {"from_version": "0.9.0", "to_version": "1.0.0", "scopes_added": [], "scopes_removed": [],
               "functions_added": [], "functions_removed": [], "needs_approval": False, "kept_grants": ["notify"]}
    against.on("POST", "/v1/bundles", (201, staged(upgrade)))
    against.on("POST", "/v1/agents", (201, AGENT))
    done = cli("install", str(bundle))
    assert done.exit_code == 0, done.output
    assert "no new permissions" in done.stdout and "Upgraded" in done.stdout


def test_install_of_a_missing_path_or_a_non_archive(cli: Callable[..., Result], against: ScriptedKernel, tmp_path: Path) -> None:
    done = cli("install", "missing/grocery", "--yes", "--json")
    assert done.exit_code == 1
    assert json.loads(done.stdout)["error"]["message"] == (
        "no such file or folder: missing/grocery; a gallery name is written without a slash, like grocery or grocery@1.0.0."
    )
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    done = cli("install", str(text), "--yes")
    assert done.exit_code == 1 and "neither a bundle folder nor a .tar.gz" in done.stderr
    assert against.seen == []


def test_install_of_an_archive_sends_its_bytes(cli: Callable[..., Result], against: ScriptedKernel, tmp_path: Path) -> None:
    archive = tmp_path / "b.tar.gz"
    archive.write_bytes(gzip.compress(b"whatever the kernel will judge"))
    against.on("POST", "/v1/bundles", (422, {"error": {"code": "invalid_bundle", "message": "the bundle is not a valid tar archive"}}))
    done = cli("install", str(archive), "--yes", "--json")
    assert json.loads(done.stdout)["error"]["code"] == "invalid_bundle"
    assert against.requests("POST", "/v1/bundles")[0].body == archive.read_bytes()


# -- build and init ---------------------------------------------------------------------


def test_build_writes_functions_json(cli: Callable[..., Result], against: ScriptedKernel, bundle: Path) -> None:
    against.on("POST", "/v1/build", (200, {"format": 1, "functions": FUNCTIONS}))
    done = cli("build", str(bundle))
    assert done.exit_code == 0, done.output
    assert json.loads((bundle / "functions.json").read_text()) == {"format": 1, "functions": FUNCTIONS}
    assert "ping" in done.stdout and "Answers pong." in done.stdout
    sent = against.requests("POST", "/v1/build")[0]
    assert sent.headers["content-type"] == "application/gzip" and "agent.yaml" in _members(sent.body)


def test_build_refuses_a_folder_without_manifest(cli: Callable[..., Result], against: ScriptedKernel, tmp_path: Path) -> None:
    done = cli("build", str(tmp_path))
    assert done.exit_code == 1 and "no agent.yaml" in done.stderr and against.seen == []


def test_init_makes_a_bundle_and_says_what_next(cli: Callable[..., Result], tmp_path: Path) -> None:
    dest = tmp_path / "made"
    done = cli("init", "hello-agent", "--dir", str(dest))
    assert done.exit_code == 0, done.output
    assert (dest / "agent.yaml").is_file()
    assert "dreamer install" in done.stdout and "dreamer test" in done.stdout and "dreamer pack" in done.stdout
    again = cli("init", "hello-agent", "--dir", str(dest), "--json")
    assert again.exit_code == 1 and "not empty" in json.loads(again.stdout)["error"]["message"]
    bad = cli("init", "Bad_Name", "--dir", str(tmp_path / "x"))
    assert bad.exit_code == 1 and "not a valid agent name" in bad.stderr and "Traceback" not in bad.output


# -- call, agents, logs ------------------------------------------------------------------


def test_call_json_and_plain(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("POST", "/v1/agents/grocery/functions/add_items", (200, {"result": {"items": ["milk"]}, "invocation_id": "inv_7"}))
    done = cli("call", "grocery", "add_items", '{"items": ["milk"]}', "--json")
    assert done.exit_code == 0
    assert json.loads(done.stdout) == {"result": {"items": ["milk"]}, "invocation_id": "inv_7"}
    assert against.seen[-1].json() == {"args": {"items": ["milk"]}}
    plain = cli("call", "grocery", "add_items")
    assert json.loads(plain.stdout) == {"items": ["milk"]}
    assert "inv_7" in plain.stderr
    assert against.seen[-1].json() == {"args": {}}


def test_agents_table(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("GET", "/v1/agents", (200, [AGENT]))
    done = cli("agents")
    row = next(line for line in done.stdout.splitlines() if "reviewed" in line)
    assert "1.0.0" in row and "ping" in row and "notify" in row
    assert json.loads(cli("agents", "--json").stdout) == [AGENT]


def test_logs_list_and_run(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    inv = {"id": "inv_9", "agent": "grocery", "function": "clear", "status": "failed",
           "started_at": "2026-01-01T10:00:00+00:00", "finished_at": "2026-01-01T10:00:01.500000+00:00", "duration_ms": 1500.0,
           "result": None, "error": {"code": "agent_error", "message": "the list is locked"}}
    against.on("GET", "/v1/invocations", (200, [inv]))
    against.on("GET", "/v1/invocations/inv_9", (200, inv | {"logs": [{"at": "2026-01-01T10:00:00+00:00", "stream": "stderr", "level": "info", "message": "clearing now"}]}))
    listed = cli("logs", "--agent", "grocery", "--limit", "5")
    row = next(line for line in listed.stdout.splitlines() if "inv_9" in line)
    assert "grocery.clear" in row and "failed" in row and "1500 ms" in row
    assert against.seen[-1].query == {"agent": ["grocery"], "limit": ["5"]}
    run = cli("logs", "--run", "inv_9")
    assert "the list is locked" in run.stdout and "clearing now" in run.stdout


# -- database ----------------------------------------------------------------------------


def test_database_write_needs_confirmation(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    path = "/v1/agents/grocery/database"
    needs = (409, {"error": {"code": "confirmation_required", "message": "this statement changes data"}})
    against.on("POST", path, needs)
    refused = cli("database", "grocery", "--query", "delete from items", "--json")
    assert refused.exit_code == 1
    assert json.loads(refused.stdout)["error"]["code"] == "confirmation_required"
    assert [r.json()["confirm"] for r in against.requests("POST", path)] == [False]

    against.seen.clear()
    against.on("POST", path, needs, (200, {"columns": [], "rows": [], "changes": 3}))
    done = cli("database", "grocery", "--query", "delete from items", "--yes", "--json")
    assert done.exit_code == 0
    assert json.loads(done.stdout) == {"columns": [], "rows": [], "changes": 3}
    assert [r.json() for r in against.requests("POST", path)] == [
        {"query": "delete from items", "confirm": False}, {"query": "delete from items", "confirm": True},
    ]


def test_database_read_prints_rows(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("POST", "/v1/agents/grocery/database", (200, {"columns": ["name"], "rows": [["milk"], ["eggs"]], "changes": 0}))
    done = cli("database", "grocery", "--query", "select name from items")
    assert done.exit_code == 0 and "milk" in done.stdout and "eggs" in done.stdout and "2 rows" in done.stdout


# -- permissions, audit, users, uninstall --------------------------------------------------


def test_grant_and_revoke(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    row = {"agent": "recipes", "scope": "agent:grocery.add_items", "risk": "low", "sentence": "s", "required": True, "granted": True}
    against.on("POST", "/v1/agents/recipes/grants", (200, [row]))
    against.on("DELETE", "/v1/agents/recipes/grants", (200, [row | {"granted": False}]))
    granted = cli("grant", "recipes", "agent:grocery")
    assert granted.exit_code == 0 and "agent:grocery.add_items" in granted.stdout
    assert against.seen[-1].json() == {"scope": "agent:grocery"}
    revoked = cli("revoke", "recipes", "agent:grocery")
    assert revoked.exit_code == 0 and "Revoked" in revoked.stdout
    assert against.seen[-1].query == {"scope": ["agent:grocery"]}


def test_audit_verify(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("GET", "/v1/audit/verify", (200, {"ok": True, "entries": 12, "first_bad": None, "reason": None}))
    done = cli("audit", "verify")
    assert done.exit_code == 0 and "Audit log intact: 12 entries" in done.stdout
    against.on("GET", "/v1/audit/verify", (200, {"ok": False, "entries": 12, "first_bad": 5, "reason": "hash mismatch"}))
    bad = cli("audit", "verify")
    assert bad.exit_code == 1 and "Audit log TAMPERED at entry 5: hash mismatch" in bad.stdout
    bad_json = cli("audit", "verify", "--json")
    assert bad_json.exit_code == 1 and json.loads(bad_json.stdout)["first_bad"] == 5


def test_users_add_prints_the_token_once(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("POST", "/v1/users", (201, {"name": "bob", "token": "drm_bobs"}))
    done = cli("users", "add", "bob")
    assert done.exit_code == 0 and "DREAMER_TOKEN=drm_bobs" in done.stdout
    assert against.seen[-1].json() == {"name": "bob"}


def test_purge_asks_first(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    against.on("DELETE", "/v1/agents/grocery", (200, {"uninstalled": "grocery", "purged": True}))
    refused = cli("uninstall", "grocery", "--purge")
    assert refused.exit_code == 1 and "--yes" in refused.stderr and against.seen == []
    done = cli("uninstall", "grocery", "--purge", "--yes")
    assert done.exit_code == 0 and "deleted its data" in done.stdout
    assert against.seen[-1].query == {"purge": ["true"]}


def test_install_by_name_goes_through_the_kernels_galleries(cli: Callable[..., Result], against: ScriptedKernel) -> None:
    verified = staged()
    verified["review"] |= {"publisher_verified": True, "publisher_fingerprint": "ed25519:ab12", "gallery": "http://g.test"}
    against.on("POST", "/v1/gallery/install", (201, verified))
    against.on("POST", "/v1/agents", (201, AGENT))
    done = cli("install", "reviewed@1.0.0", "--yes")
    assert done.exit_code == 0, done.output
    assert "Published by tests (verified, key fingerprint ed25519:ab12 on http://g.test)" in done.stdout
    sent = json.loads(against.requests("POST", "/v1/gallery/install")[0].body)
    assert sent == {"name": "reviewed", "version": "1.0.0", "accept_new_key": False}
