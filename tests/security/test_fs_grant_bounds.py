"""Folder grants are bounded by what the administrator allows each user (issue 24, finding 1).

A real kernel with DREAMER_FS_ROOTS giving alice and bob a folder each and one share;
alice is an ordinary user who tries to open dreamer's own code, /root, $DREAMER_HOME and
bob's folder to her agent, by every spelling of the path we know of.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kernelproc import KernelProc, start_kernel, write_bundle

import dreamer.kernel

INSTALL = Path(dreamer.kernel.__file__).resolve().parent.parent
FILES = '''
from dreamer.sdk import Context, function

@function
def write(ctx: Context, path: str, text: str) -> str:
    """Writes a file."""
    with open(path, "a") as f:
        f.write(text)
    return "written"
'''


@dataclass
class Site:
    kernel: KernelProc
    root: Path
    alice: str
    bob: str

    def roots_env(self) -> str:
        return f"{self.root}/homes/{{user}} {self.root}/share"

    def grant(self, token: str | None, scope: str, agent: str = "folders") -> Answer:
        """Over HTTP (a CLI process per grant is slow on a busy machine); the CLI is used below too."""
        with self.kernel.client(token) as c:
            r = c.post(f"/v1/agents/{agent}/grants", json={"scope": scope})
        return Answer(0 if r.status_code == 200 else 1, r.text)


@dataclass
class Answer:
    returncode: int
    stdout: str


# Written out, so the install needs no sandbox run to describe the bundle (a busy machine).
FUNCTIONS = {"format": 1, "functions": [{
    "name": "write", "description": "Writes a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
                   "required": ["path", "text"], "additionalProperties": False},
    "result": {"type": "string"}, "exported": True, "background": False, "confirm": False, "retries": 0,
    "examples": [],
}]}
pytestmark = pytest.mark.timeout(300)


def _bundle(root: Path, name: str, **scopes: list[str]) -> Path:
    bundle = write_bundle(root, name, FILES, **scopes)
    (bundle / "functions.json").write_text(json.dumps(FUNCTIONS))
    return bundle


def _install(site: Site, token: str | None) -> None:
    bundle = _bundle(site.root / "bundles", "folders", optional=["fs:*"])
    done = site.kernel.cli("install", str(bundle), "--yes", token=token)
    assert done.returncode == 0, done.stderr + done.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("fsbounds")
    for folder in ("homes/alice/proj", "homes/bob/secret", "homes/ALICE", "share/common", "elsewhere"):
        (root / folder).mkdir(parents=True)
    env = {"DREAMER_FS_ROOTS": f"{root}/homes/{{user}} {root}/share"}
    kernel = start_kernel(root / "home", env, wait_s=240)
    alice = kernel.cli_json("users", "add", "alice")["token"]
    bob = kernel.cli_json("users", "add", "bob")["token"]
    built = Site(kernel, root, alice, bob)
    for token in (alice, bob, None):
        _install(built, token)
    yield built
    built.kernel.stop()


def _refused(done: Answer | subprocess.CompletedProcess[str], *words: str) -> str:
    assert done.returncode != 0, done.stdout
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "permission_denied", error
    message: str = error["message"]
    assert "\n" not in message and "Traceback" not in message
    for word in words:
        assert word in message, message
    return message


def _installation_folders() -> list[Path]:
    folders = [INSTALL / name for name in ("web/static", "web", "sidekick/planner", "sidekick", "agents", "gallery", "cli", "kernel", "sdk")]
    folders += [INSTALL, Path(sys.prefix).resolve()]
    import site as pysite

    folders += [Path(p) for p in pysite.getsitepackages() if Path(p).is_dir()]
    return [f for f in folders if f.is_dir()]


@pytest.mark.parametrize("kind", ["fs", "fs.ro"])
def test_an_ordinary_user_cannot_open_dreamers_installation(site: Site, kind: str) -> None:
    for folder in _installation_folders():
        _refused(site.grant(site.alice, f"{kind}:{folder}"), str(folder))
        _refused(site.grant(site.alice, f"{kind}:{folder}/"))  # trailing slash: the same folder


def test_root_home_dreamer_home_and_system_folders_are_refused(site: Site) -> None:
    for folder in ("/root/.ssh", "/root", "/etc/ssh", "/usr/lib", str(site.kernel.home), str(site.kernel.home / "users")):
        if Path(folder).is_dir():
            _refused(site.grant(site.alice, f"fs:{folder}"))


def test_another_users_folder_is_refused_even_one_they_granted(site: Site) -> None:
    bob_secret = site.root / "homes" / "bob" / "secret"
    assert site.grant(site.bob, f"fs:{bob_secret}").returncode == 0
    _refused(site.grant(site.alice, f"fs:{bob_secret}"), "bob's folder")
    _refused(site.grant(site.alice, f"fs.ro:{site.root / 'homes' / 'bob'}"), "bob's folder")
    # A folder holding everyone's roots holds bob's too.
    _refused(site.grant(site.alice, f"fs.ro:{site.root / 'homes'}"))


def test_outside_the_roots_and_other_spellings_are_refused(site: Site) -> None:
    _refused(site.grant(site.alice, f"fs:{site.root / 'elsewhere'}"), "outside the folders", "DREAMER_FS_ROOTS")
    # Case: ALICE is not alice on Linux, and sits outside her root.
    _refused(site.grant(site.alice, f"fs:{site.root / 'homes' / 'ALICE'}"), "outside the folders")
    # /proc/self/root leads back to / through a link.
    _refused(site.grant(site.alice, f"fs:/proc/self/root{INSTALL / 'web'}"))
    # A link in alice's own root pointing at dreamer's static files.
    link = site.root / "homes" / "alice" / "static"
    link.symlink_to(INSTALL / "web" / "static")
    try:
        _refused(site.grant(site.alice, f"fs:{link}"), "symbolic link")
    finally:
        link.unlink()
    dotdot = site.grant(site.alice, f"fs:{site.root}/homes/alice/../bob")
    assert dotdot.returncode != 0 and "'..'" in dotdot.stdout


def test_own_root_and_share_are_granted_and_say_what_they_open(site: Site) -> None:
    proj = site.root / "homes" / "alice" / "proj"
    rows = json.loads(site.grant(site.alice, f"fs:{proj}/").stdout)
    assert rows[0]["opens"] == f"The agent can read and change every file in {proj}."
    share = site.root / "share" / "common"
    assert site.grant(site.alice, f"fs.ro:{share}").returncode == 0
    assert site.grant(site.bob, f"fs.ro:{share}").returncode == 0
    said = site.kernel.cli("grant", "folders", f"fs.ro:{share}", token=site.alice)
    assert said.returncode == 0 and f"The agent can read every file in {share}." in said.stdout


def test_an_admin_acting_as_alice_is_held_to_her_bounds(site: Site) -> None:
    done = site.kernel.cli("grant", "folders", f"fs:{site.root / 'elsewhere'}", "--user", "alice", "--json")
    _refused(done, "outside the folders")


def test_the_administrators_grants_say_plainly_what_they_open(site: Site) -> None:
    bob = site.root / "homes" / "bob"
    rows = json.loads(site.grant(None, f"fs.ro:{bob}").stdout)
    assert "bob's folder" in rows[0]["opens"] and str(bob) in rows[0]["opens"]
    rows = json.loads(site.grant(None, f"fs.ro:{site.root / 'elsewhere'}").stdout)
    assert "outside every user's allowed folders" in rows[0]["opens"]
    # Never writable, even for the administrator: the kernel serves and runs it.
    _refused(site.grant(None, f"fs:{INSTALL / 'web' / 'static'}"), "program folder")
    rows = json.loads(site.grant(None, f"fs.ro:{INSTALL / 'web' / 'static'}").stdout)
    assert "installation folder" in rows[0]["opens"]


def test_a_manifest_naming_a_folder_is_held_to_the_same_bounds(site: Site) -> None:
    bundle = _bundle(site.root / "bundles2", "grabber", required=[f"fs:{INSTALL / 'web' / 'static'}"])
    done = site.kernel.cli("install", str(bundle), "--yes", "--json", token=site.alice)
    assert done.returncode != 0
    assert "installation folder" in json.loads(done.stdout)["error"]["message"]
    listed = site.kernel.cli_json("agents", token=site.alice)
    assert "grabber" not in {a["name"] for a in listed}


def test_bounds_are_checked_again_when_the_worker_binds(site: Site) -> None:
    """Runs last in this module: it restarts the kernel without alice's root."""
    proj = site.root / "homes" / "alice" / "proj"
    assert site.grant(site.alice, f"fs:{proj}").returncode == 0
    with site.kernel.client(site.alice) as c:
        ok = c.post("/v1/agents/folders/functions/write", json={"args": {"path": "/mnt/proj/a.txt", "text": "x"}})
        assert ok.status_code == 200, ok.text
    assert (proj / "a.txt").read_text() == "x"
    site.kernel.stop()
    site.kernel = start_kernel(site.kernel.home, {"DREAMER_FS_ROOTS": f"{site.root}/share"}, wait_s=240)
    with site.kernel.client(site.alice) as c:
        refused = c.post("/v1/agents/folders/functions/write", json={"args": {"path": "/mnt/proj/a.txt", "text": "y"}})
    assert refused.status_code >= 400
    message = refused.json()["error"]["message"]
    assert "folders cannot start" in message and "outside the folders" in message
    assert (proj / "a.txt").read_text() == "x"


BIND = r"""
import json, sys
from pathlib import Path
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.permissions.folders import FolderBounds
from dreamer.contracts.scopes import parse_scope
root, home, target = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
bounds = FolderBounds(user="alice", is_admin=False, home=home, own_roots=(root,))
try:
    bounds.check(parse_scope("fs.ro:" + target))
    print(json.dumps({"ok": True}))
except DreamerError as error:
    print(json.dumps({"ok": False, "message": error.message}))
"""


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs unshare and root")
@pytest.mark.parametrize("source", ["web/static", "/etc", "HOME"])
def test_a_bind_mount_inside_the_root_is_recognised(tmp_path: Path, source: str) -> None:
    """A bind mount of dreamer's code (or /etc, or $DREAMER_HOME) placed inside alice's
    root has a path in her root; its filesystem identity still gives it away. The mount
    is made in a private mount namespace, so the host never sees it."""
    home, root = tmp_path / "dreamer-home", tmp_path / "alice"
    (home / "users").mkdir(parents=True)
    (root / "plain").mkdir(parents=True)
    (root / "bound").mkdir()
    src = {"web/static": str(INSTALL / "web" / "static"), "/etc": "/etc", "HOME": str(home / "users")}[source]
    script = (
        f"mount --bind {src} {root / 'bound'} && "
        f"{sys.executable} -c '{BIND}' {root} {home} {root / 'bound'} && "
        f"{sys.executable} -c '{BIND}' {root} {home} {root / 'plain'}"
    )
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    bound, plain = (json.loads(line) for line in done.stdout.splitlines())
    assert bound["ok"] is False and "through a bind mount" in bound["message"], bound
    assert plain == {"ok": True}
