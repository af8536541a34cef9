"""The builder's kit in the CLI: init's templates, pack, which source install reads, publish's
refusal of placeholders, and the reinstall wording (against a scripted kernel)."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_scripted import ScriptedKernel
from typer.testing import Result

from dreamer.contracts.archive import BundleLimits, extract
from dreamer.contracts.manifest import load_manifest
from dreamer.sdk.templates import PLACEHOLDER_DESCRIPTION, TEMPLATES

RUFF = str(Path(sys.executable).with_name("ruff"))
PROJECT = Path(__file__).resolve().parents[2]
FUNCTIONS = [{"name": "add_note", "description": "Keep a short note.", "exported": True, "background": False,
              "confirm": False, "parameters": {}}]


def _names(archive: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(archive))) as tar:
        return tar.getnames()


# -- init ---------------------------------------------------------------------------------


def test_the_cli_names_the_sdks_templates_without_importing_the_sdk() -> None:
    # `--template`'s help line names them without importing dreamer.sdk (pydantic with it): every CLI
    # process paid for that import at its start (docs/PERFORMANCE.md, seventh session).
    from dreamer.cli.commands.bundles import TEMPLATE_NAMES

    assert TEMPLATE_NAMES == TEMPLATES
    loaded = subprocess.run([sys.executable, "-c", "import sys, dreamer.cli.main; print(sorted(m for m in sys.modules "
                             "if m.split('.')[0] == 'pydantic' or m.startswith('dreamer.sdk')))"],
                            capture_output=True, text=True, timeout=60)
    assert loaded.returncode == 0 and loaded.stdout.strip() == "[]", loaded.stdout + loaded.stderr


@pytest.mark.parametrize("template", TEMPLATES)
def test_each_template_passes_ruff_and_its_own_tests(cli: Callable[..., Result], tmp_path: Path, template: str) -> None:
    done = cli("init", "hello", "--template", template, "--dir", str(tmp_path / "hello"), "--json")
    assert done.exit_code == 0, done.output
    folder = Path(json.loads(done.stdout)["path"])
    manifest = load_manifest(folder)
    assert manifest.name == "hello" and manifest.kind == ("tool" if template == "tool" else "agent")
    # The package is never spelled like the bundle: `dreamer install hello` inside the folder is no path.
    assert not (folder / "hello").exists() and (folder / "hello_agent" / "server.py").is_file()
    assert (folder / "tests" / "test_server.py").is_file()
    for path in folder.rglob("*"):
        assert not path.is_file() or "{{" not in path.read_text(), path
    # ruff with the project's rules, and with ruff's defaults (no config at all), from inside and outside.
    for args, cwd in ((["--config", str(PROJECT / "pyproject.toml"), "."], folder), (["--isolated", "."], folder),
                      (["--isolated", "hello"], folder.parent)):
        linted = subprocess.run([RUFF, "check", *args], cwd=cwd, capture_output=True, text=True)
        assert linted.returncode == 0, (args, linted.stdout + linted.stderr)
    # Its tests pass as written, as pytest runs them (`dreamer test` runs the same inside the sandbox).
    env = {**os.environ, "PYTHONPATH": str(folder), "PYTHONDONTWRITEBYTECODE": "1"}
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "tests"],
                         cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert " passed" in ran.stdout and "failed" not in ran.stdout


def test_the_calls_template_declares_what_it_calls(cli: Callable[..., Result], tmp_path: Path) -> None:
    assert cli("init", "shopper", "-t", "calls", "--dir", str(tmp_path / "s")).exit_code == 0
    assert load_manifest(tmp_path / "s").permissions.required == ["agent:grocery.add_items"]
    assert cli("init", "morning", "-t", "background", "--dir", str(tmp_path / "m")).exit_code == 0
    manifest = load_manifest(tmp_path / "m")
    assert manifest.permissions.required == ["schedule", "notify"] and manifest.triggers[0].entrypoint == "morning"


def test_an_unknown_template_is_one_sentence(cli: Callable[..., Result], tmp_path: Path) -> None:
    done = cli("init", "hello", "--template", "fancy", "--dir", str(tmp_path / "h"))
    assert done.exit_code == 1 and "there is no template 'fancy'; choose one of plain, database" in done.stderr
    assert not (tmp_path / "h").exists()


# -- pack ---------------------------------------------------------------------------------


@pytest.fixture
def notebook(cli: Callable[..., Result], tmp_path: Path) -> Path:
    assert cli("init", "notebook", "-t", "database", "--dir", str(tmp_path / "notebook")).exit_code == 0
    return tmp_path / "notebook"


def test_pack_builds_first_then_packs_the_same_bytes(cli: Callable[..., Result], against: ScriptedKernel, notebook: Path) -> None:
    against.on("POST", "/v1/build", (200, {"format": 1, "functions": FUNCTIONS}))
    done = cli("pack", str(notebook), "--json")
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    target = notebook / "notebook-0.1.0.tar.gz"
    assert answer["path"] == str(target.resolve()) and answer["built"] is True and answer["bytes"] == target.stat().st_size
    assert len(against.requests("POST", "/v1/build")) == 1 and (notebook / "functions.json").is_file()
    first = target.read_bytes()
    assert first[4:8] == b"\0\0\0\0"  # gzip mtime 0

    # Touch every file and add what the format leaves out: same bytes, no second build.
    (notebook / "notebook_agent" / "__pycache__").mkdir()
    (notebook / "notebook_agent" / "__pycache__" / "server.cpython-311.pyc").write_bytes(b"junk")
    for path in notebook.rglob("*"):
        os.utime(path, (1, 1))
    os.utime(notebook / "functions.json", (2, 2))
    again = cli("pack", str(notebook), "--json")
    assert json.loads(again.stdout)["built"] is False and len(against.requests("POST", "/v1/build")) == 1
    assert target.read_bytes() == first

    names = _names(first)
    # Sorted entries: within each folder the children come in name order, whatever the disk says.
    by_parent: dict[str, list[str]] = {}
    for entry in names:
        by_parent.setdefault(entry.rpartition("/")[0], []).append(entry.rpartition("/")[2])
    assert all(children == sorted(children) for children in by_parent.values()) and len(by_parent) >= 3
    assert "functions.json" in names and "tests/test_server.py" in names
    assert not any("__pycache__" in n or n.endswith(".tar.gz") for n in names)  # nor its own archive
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(first))) as tar:
        assert {(m.uid, m.gid, m.mtime, m.uname) for m in tar.getmembers()} == {(0, 0, 0, "")}
        assert {m.mode for m in tar.getmembers()} <= {0o644, 0o755}
    # What install accepts: the kernel's own extractor takes it.
    assert (extract(first, notebook.parent / "unpacked", BundleLimits()) / "agent.yaml").is_file()


def test_pack_writes_where_it_is_told(cli: Callable[..., Result], against: ScriptedKernel, notebook: Path, tmp_path: Path) -> None:
    (notebook / "functions.json").write_text(json.dumps({"format": 1, "functions": FUNCTIONS}))
    done = cli("pack", str(notebook), "-o", str(tmp_path / "out" / "nb.tar.gz"))
    assert done.exit_code == 0, done.output
    assert "Wrote" in done.stdout and (tmp_path / "out" / "nb.tar.gz").is_file()
    assert against.requests("POST", "/v1/build") == [] and not (notebook / "notebook-0.1.0.tar.gz").exists()
    assert not list((tmp_path / "out").glob(".*.tmp"))


def test_a_tool_bundle_packs_with_its_tools_json(cli: Callable[..., Result], against: ScriptedKernel, tmp_path: Path) -> None:
    assert cli("init", "counter", "-t", "tool", "--dir", str(tmp_path / "counter")).exit_code == 0
    against.on("POST", "/v1/build", (200, {"tools": [{"name": "count_words"}]}))
    first = cli("pack", str(tmp_path / "counter"), "--json")
    assert json.loads(first.stdout)["built"] is True and (tmp_path / "counter" / "tools.json").is_file()
    second = cli("pack", str(tmp_path / "counter"), "--json")
    assert json.loads(second.stdout)["built"] is False and len(against.requests("POST", "/v1/build")) == 1
    assert "tools.json" in _names((tmp_path / "counter" / "counter-0.1.0.tar.gz").read_bytes())


def test_pack_refuses_what_is_not_a_bundle(cli: Callable[..., Result], against: ScriptedKernel, tmp_path: Path) -> None:
    done = cli("pack", str(tmp_path), "--json")
    assert done.exit_code == 1 and "no agent.yaml" in json.loads(done.stdout)["error"]["message"]
    (tmp_path / "agent.yaml").write_text("name: x\n")
    done = cli("pack", str(tmp_path))
    assert done.exit_code == 1 and "needs a `name:` and a `version:`" in done.stderr and against.seen == []


# -- install sources ----------------------------------------------------------------------


STAGED = {"bundle_id": "stg_1", "functions": FUNCTIONS,
          "manifest": {"name": "notebook", "version": "0.1.0", "kind": "agent", "title": "Notebook",
                       "description": "Notes.", "publisher": "acme", "entry": "notebook_agent.server"}}


def test_a_bare_name_is_a_gallery_name_even_next_to_a_folder_of_that_name(
    cli: Callable[..., Result], against: ScriptedKernel, notebook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(notebook.parent)
    review = {"publisher_verified": True, "publisher_fingerprint": "ab:cd", "gallery": "http://gallery.example"}
    against.on("POST", "/v1/gallery/install", (200, STAGED | {"review": review}))
    against.on("POST", "/v1/agents", (201, {"name": "notebook", "version": "0.1.0", "functions": FUNCTIONS}))
    done = cli("install", "notebook", "--yes")
    assert done.exit_code == 0, done.output
    assert json.loads(against.requests("POST", "/v1/gallery/install")[0].body) == {
        "name": "notebook", "version": None, "accept_new_key": False}
    assert against.requests("POST", "/v1/bundles") == []
    assert "to install the folder, say ./notebook" in done.stderr
    assert "From: the gallery http://gallery.example (publisher verified)" in done.stdout


def test_a_missing_gallery_package_next_to_a_folder_says_how_to_install_the_folder(
    cli: Callable[..., Result], against: ScriptedKernel, notebook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(notebook.parent)
    against.on("POST", "/v1/gallery/install", (404, {"error": {"code": "not_found", "message": "no package named notebook on this gallery"}}))
    done = cli("install", "notebook", "--yes", "--json")
    assert done.exit_code == 1
    assert json.loads(done.stdout)["error"]["message"] == (
        "no package named notebook on this gallery; to install the folder notebook, say ./notebook")


@pytest.mark.parametrize("shown", ["./notebook", "notebook/", "ABS"])
def test_a_path_is_local(cli: Callable[..., Result], against: ScriptedKernel, notebook: Path,
                         monkeypatch: pytest.MonkeyPatch, shown: str) -> None:
    monkeypatch.chdir(notebook.parent)
    shown = str(notebook) if shown == "ABS" else shown
    against.on("POST", "/v1/bundles", (201, STAGED | {"review": {"publisher_verified": False}}))
    against.on("POST", "/v1/agents", (201, {"name": "notebook", "version": "0.1.0"}))
    done = cli("install", shown, "--yes")
    assert done.exit_code == 0, done.output
    assert against.requests("POST", "/v1/gallery/install") == []
    assert "agent.yaml" in _names(against.requests("POST", "/v1/bundles")[0].body)
    assert f"From: the local folder {shown} (not verified" in done.stdout


def test_an_archive_without_a_slash_is_local(cli: Callable[..., Result], against: ScriptedKernel, notebook: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    (notebook / "functions.json").write_text(json.dumps({"format": 1, "functions": FUNCTIONS}))
    monkeypatch.chdir(notebook)
    assert cli("pack").exit_code == 0
    against.on("POST", "/v1/bundles", (201, STAGED | {"review": {"publisher_verified": False}}))
    against.on("POST", "/v1/agents", (201, {"name": "notebook", "version": "0.1.0"}))
    done = cli("install", "notebook-0.1.0.tar.gz", "--yes")
    assert done.exit_code == 0, done.output
    assert against.requests("POST", "/v1/bundles")[0].body == (notebook / "notebook-0.1.0.tar.gz").read_bytes()
    assert "From: the archive notebook-0.1.0.tar.gz (not verified" in done.stdout


def test_a_bare_word_that_is_no_package_name_says_how_to_say_a_path(
    cli: Callable[..., Result], against: ScriptedKernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "My_Agent").mkdir()
    done = cli("install", "My_Agent", "--yes")
    assert done.exit_code == 1 and "to install the folder, say ./My_Agent" in done.stderr and against.seen == []


def test_reinstalling_the_same_version_is_no_upgrade(cli: Callable[..., Result], against: ScriptedKernel, notebook: Path) -> None:
    upgrade = {"from_version": "0.1.0", "to_version": "0.1.0", "needs_approval": False, "kept_grants": []}
    against.on("POST", "/v1/bundles", (201, STAGED | {"upgrade": upgrade}))
    against.on("POST", "/v1/agents", (201, {"name": "notebook", "version": "0.1.0"}))
    done = cli("install", str(notebook))
    assert done.exit_code == 0, done.output
    assert "Reinstall 0.1.0" in done.stdout and "Reinstalled notebook 0.1.0" in done.stdout
    assert "Upgrade from" not in done.stdout and "Upgraded" not in done.stdout


# -- publish ------------------------------------------------------------------------------


def test_publish_refuses_the_scaffolds_placeholders(cli: Callable[..., Result], notebook: Path) -> None:
    manifest = notebook / "agent.yaml"
    done = cli("publish", str(notebook), "--json")
    assert done.exit_code == 1 and done.stderr == ""
    message = json.loads(done.stdout)["error"]["message"]
    assert message.startswith(f"fill in `description:` in {manifest}") and message.count(". ") == 0
    manifest.write_text(manifest.read_text().replace(PLACEHOLDER_DESCRIPTION, "Keeps short notes."))
    done = cli("publish", str(notebook))
    assert done.exit_code == 1 and f"set `publisher:` in {manifest}" in done.stderr and "not 'me'" in done.stderr
    manifest.write_text(manifest.read_text().replace("publisher: me", "publisher: acme"))
    done = cli("publish", str(notebook))
    # Past the placeholders: now it is the login that is missing.
    assert done.exit_code == 1 and "description" not in done.stderr and "publisher:" not in done.stderr


# -- what the docs say ----------------------------------------------------------------------


def test_the_readme_names_the_starters_installed_and_the_builder_path() -> None:
    from dreamer.agents.bundles import STARTERS, TOOLS
    from dreamer.contracts.manifest import load_manifest as manifest_of

    readme = (PROJECT / "README.md").read_text()
    names = [manifest_of(PROJECT / "agents" / folder).name for folder in STARTERS]
    intro = readme[: readme.index("## The web app")]
    assert all(f"`{name}`" in intro for name in names) and all(f"`{tool}`" in intro for tool in TOOLS)
    section = readme[readme.index("## Publish an agent"):]
    steps = ["dreamer init", "dreamer test", "dreamer build", "dreamer pack", "dreamer publish", "dreamer install hello"]
    assert [section.index(step) for step in steps] == sorted(section.index(step) for step in steps)
    for template in TEMPLATES:
        assert f"`{template}`" in readme


def test_the_web_install_page_names_dreamer_pack() -> None:
    page = (PROJECT / "web" / "templates" / "install.html").read_text()
    assert "dreamer pack" in page and "dreamer build" not in page


def test_setup_says_each_step_and_what_to_do_next() -> None:
    script = (PROJECT / "scripts" / "setup.sh").read_text()
    steps = [line for line in script.splitlines() if 'echo "setup: ' in line and "/3 " in line]
    assert {line.split("setup: ")[1][:3] for line in steps} == {"1/3", "2/3", "3/3"}
    assert script.count("next: ") == 2 and "pip install -q" in script
