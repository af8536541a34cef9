"""Issue 14, finding 1: another user's bundle never runs in my account.

Bundles are stored by content digest (bundles/NAME/VERSION-DIGEST), so bob's upload of
a name@version someone else has is simply another bundle: it can neither replace nor
shadow what I run or may roll back to, and its answer tells him nothing about me. The
files are checked against the approved digest whenever a worker starts and at rollback.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from dreamer.contracts.archive import pack, tree_digest
from kernelproc import KernelProc, write_bundle

REPO = Path(__file__).resolve().parents[2]

DIARY = '''
from dreamer.sdk import Context, function

@function(exported=True)
def write(ctx: Context, text: str) -> None:
    """Keep an entry."""
    ctx.db.execute("CREATE TABLE IF NOT EXISTS entries (text TEXT)")
    ctx.db.execute("INSERT INTO entries VALUES (?)", (text,))

@function(exported=True)
def read(ctx: Context) -> list:
    """Every entry."""
    ctx.db.execute("CREATE TABLE IF NOT EXISTS entries (text TEXT)")
    return [r[0] for r in ctx.db.execute("SELECT text FROM entries")]

@function(exported=True)
def whose(ctx: Context) -> str:
    """Whose code answers."""
    return "WHOSE"
'''


# A busy shared machine makes a kernel's first start and its CLI processes slow; this is a
# bound against a hang, not a timing.
pytestmark = pytest.mark.timeout(600)


def _install(kernel: KernelProc, folder: Path, token: str | None = None) -> dict:
    """Upload and approve over HTTP, as `dreamer install --yes` does (fewer processes)."""
    with kernel.client(token) as c:
        staged = c.post("/v1/bundles", content=pack(folder), headers={"Content-Type": "application/gzip"})
        assert staged.status_code == 201, staged.text
        done = c.post("/v1/agents", json={"bundle_id": staged.json()["bundle_id"], "approve": True})
        assert done.status_code == 201, done.text
        return done.json()


def _call(kernel: KernelProc, agent: str, function: str, args: dict | None = None, token: str | None = None) -> object:
    with kernel.client(token) as c:
        r = c.post(f"/v1/agents/{agent}/functions/{function}", json={"args": args or {}})
    assert r.status_code == 200, r.text
    return r.json()["result"]


def _error(kernel: KernelProc, agent: str, function: str, token: str | None = None) -> dict:
    with kernel.client(token) as c:
        r = c.post(f"/v1/agents/{agent}/functions/{function}", json={"args": {}})
    assert r.status_code >= 400, r.text
    return r.json()["error"]


def _diary(root: Path, name: str, whose: str, version: str) -> Path:
    return write_bundle(root / f"{whose}-{version}", name, DIARY.replace("WHOSE", whose), version=version)


def _folders(kernel: KernelProc, name: str) -> list[Path]:
    return sorted((kernel.home / "bundles" / name).iterdir())


def _tamper(folder: Path, agent: str) -> None:
    """What a process with write access to the kernel's home could do behind its back."""
    server = folder / agent.replace("-", "_") / "server.py"
    os.chmod(server.parent, 0o755)
    os.chmod(server, 0o644)
    server.write_text(server.read_text().replace('return "', 'return "tampered '))


@pytest.mark.parametrize("name", ["diary", "journal-x"])
def test_rollback_runs_my_code_after_another_user_uploads_the_same_version(
    accounts: tuple[KernelProc, str], tmp_path: Path, name: str
) -> None:
    """The reproduction: me 1.0.0 → write → upgrade to 1.1.0 → bob installs his own 1.0.0 → me rolls back."""
    kernel, bob = accounts
    _install(kernel, _diary(tmp_path, name, "mine", "1.0.0"))
    _call(kernel, name, "write", {"text": "dear diary"})
    _install(kernel, _diary(tmp_path, name, "mine-new", "1.1.0"))
    assert _call(kernel, name, "whose") == "mine-new"

    # Bob's different 1.0.0 is accepted (no "already installed with different contents"
    # answer to learn from), and runs for him.
    _install(kernel, _diary(tmp_path, name, "bob's", "1.0.0"), token=bob)
    assert _call(kernel, name, "whose", token=bob) == "bob's"

    back = kernel.cli_json("rollback", name, "--yes")
    assert isinstance(back, dict) and back["version"] == "1.0.0"
    assert _call(kernel, name, "whose") == "mine"
    assert _call(kernel, name, "read") == ["dear diary"]
    assert _call(kernel, name, "whose", token=bob) == "bob's"  # and bob still runs his own
    # Three contents, three folders; none was replaced.
    assert len(_folders(kernel, name)) == 3


def test_an_upload_of_a_taken_name_and_version_answers_the_same_whoever_has_it(
    accounts: tuple[KernelProc, str], tmp_path: Path
) -> None:
    """No one-bit oracle: bob's install of name@version succeeds alike whether or not another
    user has a different bundle of that name@version."""
    kernel, bob = accounts
    _install(kernel, _diary(tmp_path / "me", "secret-plans", "mine", "2.0.0"))
    taken = _install(kernel, _diary(tmp_path / "bob", "secret-plans", "bob's", "2.0.0"), token=bob)
    free = _install(kernel, _diary(tmp_path / "bob", "nobody-has", "bob's", "2.0.0"), token=bob)
    assert sorted(taken) == sorted(free)
    assert (taken["version"], free["version"]) == ("2.0.0", "2.0.0")
    assert _call(kernel, "secret-plans", "whose") == "mine"


def test_uninstall_then_a_squatted_starter_does_not_reach_the_next_user(
    accounts: tuple[KernelProc, str], tmp_path: Path
) -> None:
    """me uninstalls watch; bob installs a modified watch of the same version; a new user
    still gets the real starter, with a token, in one piece."""
    kernel, bob = accounts
    real = REPO / "agents" / "watch"
    assert kernel.cli("uninstall", "watch", "--json").returncode == 0
    squat = tmp_path / "watch"
    shutil.copytree(real, squat, ignore=shutil.ignore_patterns("__pycache__"))
    server = squat / "watch" / "server.py"
    server.write_text(server.read_text() + '\n\n@function(exported=True)\ndef pwned(ctx: Context) -> str:\n    """Squatted."""\n    return "bob"\n')
    (squat / "functions.json").unlink(missing_ok=True)
    _install(kernel, squat, token=bob)
    assert "pwned" in {f["name"] for f in next(a for a in kernel.cli_json("agents", token=bob) if a["name"] == "watch")["functions"]}

    carol = kernel.cli_json("users", "add", "carol")
    assert isinstance(carol, dict) and carol["token"]
    theirs = {a["name"]: a for a in kernel.cli_json("agents", token=carol["token"])}
    assert "watch" in theirs and "pwned" not in {f["name"] for f in theirs["watch"]["functions"]}
    # My reinstall of the starter folder is the real one too.
    mine = _install(kernel, real)
    assert "pwned" not in {f["name"] for f in mine["functions"]}


def test_a_bundle_changed_on_disk_does_not_start(accounts: tuple[KernelProc, str], tmp_path: Path) -> None:
    kernel, _ = accounts
    _install(kernel, _diary(tmp_path, "fragile", "mine", "1.0.0"))
    [folder] = _folders(kernel, "fragile")
    assert folder.name.endswith(tree_digest(folder))  # the folder is named by its content
    _tamper(folder, "fragile")
    error = _error(kernel, "fragile", "whose")  # never called before: a worker starts now
    assert error["code"] == "digest_mismatch" and "install it again" in error["message"]
    # Installing the approved files again puts them back at their address.
    _install(kernel, _diary(tmp_path / "again", "fragile", "mine", "1.0.0"))
    assert _call(kernel, "fragile", "whose") == "mine"


def test_rollback_to_a_changed_bundle_is_refused_and_changes_nothing(
    accounts: tuple[KernelProc, str], tmp_path: Path
) -> None:
    kernel, _ = accounts
    old = _diary(tmp_path, "undo-me", "mine", "1.0.0")
    _install(kernel, old)
    _call(kernel, "undo-me", "write", {"text": "kept"})
    _install(kernel, _diary(tmp_path, "undo-me", "mine-new", "1.1.0"))
    [first] = [f for f in _folders(kernel, "undo-me") if f.name.startswith("1.0.0-")]
    _tamper(first, "undo-me")
    done = kernel.cli("rollback", "undo-me", "--yes", "--json")
    assert done.returncode != 0 and json.loads(done.stdout)["error"]["code"] == "digest_mismatch"
    assert _call(kernel, "undo-me", "whose") == "mine-new"  # still the upgrade, nothing switched
    assert next(a for a in kernel.cli_json("agents") if a["name"] == "undo-me")["version"] == "1.1.0"


def test_users_add_is_all_or_nothing(accounts: tuple[KernelProc, str]) -> None:
    """A starter that fails to install leaves no user behind (no account without starters or
    token); once the cause is gone the same name is created whole."""
    kernel, _ = accounts
    blocker = kernel.home / "users" / "dave"
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("not a folder")  # the new user's files cannot be made
    done = kernel.cli("users", "add", "dave", "--json")
    assert done.returncode != 0, done.stdout
    assert "token" not in done.stdout
    assert "the user dave was not created" in json.loads(done.stdout)["error"]["message"]
    assert "dave" not in {u["name"] for u in kernel.cli_json("users", "list")}
    blocker.unlink()
    dave = kernel.cli_json("users", "add", "dave")
    assert isinstance(dave, dict) and dave["token"]
    names = {a["name"] for a in kernel.cli_json("agents", token=dave["token"])}
    assert {"grocery", "notes", "recipes", "watch"} <= names
