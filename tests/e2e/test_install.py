"""Install review, upgrades, hostile bundles, uninstall: nothing is half-installed."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

from kernelproc import KernelProc, write_bundle

SIMPLE = '''
from dreamer.sdk import Context, function

@function(exported=True)
def ping(ctx: Context) -> str:
    """Answers pong."""
    return "pong"
'''


def _bundle_dirs(kernel: KernelProc) -> set[str]:
    root = kernel.home / "bundles"
    return {str(p.relative_to(root)) for p in root.glob("*/*")} if root.exists() else set()


def _agent_names(kernel: KernelProc) -> set[str]:
    return {a["name"] for a in kernel.cli_json("agents")}


def _staged(kernel: KernelProc) -> set[str]:
    root = kernel.home / "staging"
    return {p.name for p in root.iterdir()} if root.exists() else set()


def _refused(kernel: KernelProc, path: Path, *words: str, via_cli: bool = False) -> str:
    """Install `path` and expect a refusal naming `words`, with nothing left behind.

    Through the API by default (fast); `via_cli` also checks what a person sees.
    """
    with kernel.client() as c:
        before_agents = {a["name"] for a in c.get("/v1/agents").json()}
        before_dirs, before_staged = _bundle_dirs(kernel), _staged(kernel)
        if via_cli:
            done = kernel.cli("install", str(path), "--yes", "--json")
            assert done.returncode != 0, done.stdout
            message = json.loads(done.stdout)["error"]["message"]
            plain = kernel.cli("install", str(path), "--yes")
            assert plain.returncode != 0 and "Traceback" not in plain.stderr and plain.stderr.strip()
        else:
            from dreamer.contracts.archive import pack

            body = path.read_bytes() if path.is_file() else pack(path)
            answer = c.post("/v1/bundles", content=body, headers={"Content-Type": "application/gzip"})
            assert answer.status_code >= 400, answer.text
            message = answer.json()["error"]["message"]
        for word in words:
            assert word in message, message
        assert {a["name"] for a in c.get("/v1/agents").json()} == before_agents
    assert _bundle_dirs(kernel) == before_dirs
    assert _staged(kernel) == before_staged
    return message


def test_review_is_shown_and_optional_scopes_are_off_unless_turned_on(kernel: KernelProc, tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path, "reviewed", SIMPLE, required=["notify"], optional=["llm", "net:api.example.com"])
    # No --yes and no terminal: nothing is installed.
    done = kernel.cli("install", str(bundle))
    assert done.returncode != 0 and "--yes" in done.stderr
    assert "reviewed" not in _agent_names(kernel)
    # The review names the publisher and each scope in plain words with its risk.
    shown = kernel.cli("install", str(bundle), "--grant", "net:api.example.com", input="y\n")
    text = shown.stdout + shown.stderr
    assert "tests" in text and "Post messages to your feed" in text and "high" in text.lower()
    if shown.returncode != 0:  # a CLI that refuses prompts without a tty: approve explicitly
        shown = kernel.cli("install", str(bundle), "--grant", "net:api.example.com", "--yes")
        assert shown.returncode == 0, shown.stderr
    perms = {p["scope"]: p for p in kernel.cli_json("permissions", "reviewed")}
    assert perms["notify"]["granted"] and not perms["llm"]["granted"]
    assert perms["net:api.example.com"]["granted"] and perms["net:api.example.com"]["risk"] == "high"

    not_optional = kernel.cli("install", str(bundle), "--yes", "--without", "notify", "--json")
    assert not_optional.returncode != 0
    assert "required" in json.loads(not_optional.stdout)["error"]["message"]


def test_upgrade_shows_only_what_changed(kernel: KernelProc, tmp_path: Path) -> None:
    v1 = write_bundle(tmp_path / "v1", "upgrader", SIMPLE, version="1.0.0")
    assert kernel.cli("install", str(v1), "--yes").returncode == 0
    v2 = write_bundle(tmp_path / "v2", "upgrader", SIMPLE + '''
@function(exported=True)
def shout(ctx: Context, text: str) -> str:
    """Upper-cases."""
    return text.upper()
''', version="1.1.0", required=["notify"])
    with kernel.client() as c:
        from dreamer.contracts.archive import pack

        staged = c.post("/v1/bundles", content=pack(v2), headers={"Content-Type": "application/gzip"}).json()
    upgrade = staged["upgrade"]
    assert upgrade["from_version"] == "1.0.0" and upgrade["to_version"] == "1.1.0"
    assert [s["scope"] for s in upgrade["scopes_added"]] == ["notify"]
    assert upgrade["functions_added"] == ["shout"] and upgrade["needs_approval"] is True
    refused = kernel.cli("install", str(v2))
    assert refused.returncode != 0
    assert kernel.cli_json("agents") and next(a for a in kernel.cli_json("agents") if a["name"] == "upgrader")["version"] == "1.0.0"
    assert kernel.cli("install", str(v2), "--yes").returncode == 0
    agent = next(a for a in kernel.cli_json("agents") if a["name"] == "upgrader")
    assert agent["version"] == "1.1.0" and agent["grants"] == ["notify"]
    assert kernel.cli_json("call", "upgrader", "shout", '{"text": "hi"}')["result"] == "HI"


def test_hostile_bundles_are_refused_whole(kernel: KernelProc, tmp_path: Path) -> None:
    ok = write_bundle(tmp_path / "a", "fine-agent", SIMPLE)

    missing = tmp_path / "missing"
    missing.mkdir()
    (missing / "agent.yaml").write_text("name: missing\nversion: 1.0.0\n")
    _refused(kernel, missing, "agent.yaml", "title", via_cli=True)

    wrong_type = write_bundle(tmp_path / "b", "wrongtype", SIMPLE)
    (wrong_type / "agent.yaml").write_text((wrong_type / "agent.yaml").read_text().replace("version: 0.1.0", "version: [1, 2]"))
    _refused(kernel, wrong_type, "version")

    path_name = write_bundle(tmp_path / "c", "pathname", SIMPLE)
    (path_name / "agent.yaml").write_text((path_name / "agent.yaml").read_text().replace("name: pathname", "name: ../../etc"))
    _refused(kernel, path_name, "name")

    bad_scope = write_bundle(tmp_path / "d", "badscope", SIMPLE, required=["root:everything"])
    _refused(kernel, bad_scope, "root:everything")

    linked = write_bundle(tmp_path / "e", "linked", SIMPLE)
    os.symlink("/etc/passwd", linked / "passwd")
    _refused(kernel, linked, "passwd", via_cli=True)

    not_yaml = write_bundle(tmp_path / "f", "notyaml", SIMPLE)
    (not_yaml / "agent.yaml").write_text("name: [unclosed\n")
    _refused(kernel, not_yaml, "YAML")

    broken_code = write_bundle(tmp_path / "g", "brokencode", "import nosuchmodule_xyz\n")
    _refused(kernel, broken_code, "nosuchmodule_xyz")

    escaping = tmp_path / "escape.tar.gz"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("agent.yaml", (ok / "agent.yaml").read_bytes()), ("../../evil.py", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    escaping.write_bytes(buf.getvalue())
    _refused(kernel, escaping, "..")

    garbage = tmp_path / "garbage.tar.gz"
    garbage.write_bytes(os.urandom(4096))
    _refused(kernel, garbage)

    # After all that, a good bundle still installs.
    assert kernel.cli("install", str(ok), "--yes").returncode == 0


def test_uninstall_keeps_data_unless_purged(kernel: KernelProc, tmp_path: Path) -> None:
    code = SIMPLE + '''
@function(exported=True)
def remember(ctx: Context, note: str) -> int:
    """Stores a note."""
    ctx.db.execute("create table if not exists notes(t text)")
    ctx.db.execute("insert into notes values (?)", (note,))
    return ctx.db.execute("select count(*) from notes").fetchone()[0]
'''
    bundle = write_bundle(tmp_path, "keeper", code)
    assert kernel.cli("install", str(bundle), "--yes").returncode == 0
    assert kernel.cli_json("call", "keeper", "remember", '{"note": "a"}')["result"] == 1
    assert kernel.cli("uninstall", "keeper", "--yes").returncode == 0
    assert "keeper" not in _agent_names(kernel)
    assert kernel.cli("call", "keeper", "ping").returncode != 0
    assert kernel.cli("install", str(bundle), "--yes").returncode == 0
    assert kernel.cli_json("call", "keeper", "remember", '{"note": "b"}')["result"] == 2
    assert kernel.cli("uninstall", "keeper", "--purge", "--yes").returncode == 0
    assert kernel.cli("install", str(bundle), "--yes").returncode == 0
    assert kernel.cli_json("call", "keeper", "remember", '{"note": "c"}')["result"] == 1


def test_build_writes_functions_json_from_the_sandbox(kernel: KernelProc, tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path, "built", SIMPLE + '''
import os

@function(exported=True, examples=["ping {host}"])
def where(ctx: Context, host: str) -> dict:
    """Reports where the import ran."""
    return {}

# Import-time facts, recorded where the kernel cannot fake them: inside the sandbox
# there is no /etc and the bundle sits at /agent.
IMPORTED_AT = __file__
assert IMPORTED_AT.startswith("/agent/"), IMPORTED_AT
assert not os.path.exists("/etc/passwd")
''')
    done = kernel.cli("build", str(bundle), "--json")
    assert done.returncode == 0, done.stderr + done.stdout
    written = json.loads((bundle / "functions.json").read_text())
    names = {f["name"]: f for f in written["functions"]}
    assert set(names) == {"ping", "where"}
    assert names["where"]["examples"] == ["ping {host}"]
    assert names["where"]["parameters"]["required"] == ["host"]

    broken = write_bundle(tmp_path / "x", "broken", "raise RuntimeError('no import for you')\n")
    failed = kernel.cli("build", str(broken), "--json")
    assert failed.returncode != 0
    assert "no import for you" in json.loads(failed.stdout)["error"]["message"]
    assert not (broken / "functions.json").exists()
