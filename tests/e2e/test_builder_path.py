"""The builder's path as the README tells it, with the real CLI, a real kernel and a real gallery:
init (database template) → edit nothing → test → build → pack → install the archive → publish
(refused until agent.yaml is filled in) → a second user installs from the gallery by bare name
(with a folder of that name right there) → calls a function."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernelproc import KernelProc, gallery_and_kernel

# Every step is a real CLI process against a real kernel (the first start installs the starters).
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProc, str, Path]]:
    root = tmp_path_factory.mktemp("builder-path")
    with gallery_and_kernel(root) as (kernel, url):
        yield kernel, url, root


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def test_init_to_a_second_users_call(world: tuple[KernelProc, str, Path]) -> None:
    kernel, url, root = world
    work = root / "work"
    work.mkdir()
    made = _ok(kernel.cli("init", "notebook", "--template", "database", cwd=work))
    folder = work / "notebook"
    assert "database template" in made and (folder / "notebook_agent" / "server.py").is_file()

    # Nothing edited: its own tests pass in the sandbox, build lists both functions.
    tested = kernel.cli_json("test", cwd=folder)
    assert tested["passed"] is True and "2 passed" in tested["output"], tested
    built = kernel.cli_json("build", cwd=folder)
    assert sorted(f["name"] for f in built["functions"]) == ["add_note", "list_notes"]

    # pack: fresh functions.json, so no build; the same folder gives the same bytes.
    packed = kernel.cli("pack", cwd=folder)
    assert "Building" not in packed.stderr and "notebook-0.1.0.tar.gz" in _ok(packed)
    archive = folder / "notebook-0.1.0.tar.gz"
    first = archive.read_bytes()
    again = kernel.cli_json("pack", cwd=folder)
    assert archive.read_bytes() == first and again["bytes"] == len(first) and again["built"] is False

    # The archive installs (a file name without a slash is still a local archive) and runs.
    installed = _ok(kernel.cli("install", "notebook-0.1.0.tar.gz", "--yes", cwd=folder))
    assert "From: the archive notebook-0.1.0.tar.gz (not verified" in installed
    assert "Installed notebook 0.1.0" in installed
    kernel.cli_json("call", "notebook", "add_note", '{"text": "mine"}')
    # Installing the same version again is a reinstall, not an upgrade from 0.1.0 to 0.1.0.
    reinstalled = _ok(kernel.cli("install", "./notebook-0.1.0.tar.gz", "--yes", cwd=folder))
    assert "Reinstall 0.1.0" in reinstalled and "Reinstalled notebook 0.1.0" in reinstalled
    assert "Upgrade from" not in reinstalled

    # publish refuses the scaffold's placeholder description, naming the field to fill.
    refused = kernel.cli("publish", cwd=folder)
    assert refused.returncode == 1 and "fill in `description:`" in refused.stderr, refused.stderr
    _ok(kernel.cli("login", url, "--name", "acme"))
    manifest = folder / "agent.yaml"
    text = manifest.read_text()
    text = text.replace(text.split("description: ", 1)[1].split("\n", 1)[0], "Keeps short notes for you.")
    manifest.write_text(text.replace("publisher: me", "publisher: acme"))
    published = kernel.cli("publish", cwd=folder)
    assert "Published notebook 0.1.0" in _ok(published)
    assert "Building" in published.stderr  # agent.yaml changed since functions.json was written

    # A second user installs by bare name from the folder holding ./notebook: the gallery wins.
    with kernel.client() as api:
        assert api.post("/v1/users", json={"name": "bob"}).status_code in (200, 201)
    from_gallery = kernel.cli("install", "notebook", "--yes", "--user", "bob", cwd=work)
    shown = _ok(from_gallery)
    assert "to install the folder, say ./notebook" in from_gallery.stderr
    assert f"From: the gallery {url} (publisher verified)" in shown and "Installed notebook 0.1.0" in shown
    agents = kernel.cli_json("agents", "--user", "bob")
    assert next(a for a in agents if a["name"] == "notebook")["verified_publisher"]["gallery"] == url
    added = kernel.cli_json("call", "notebook", "add_note", '{"text": "  from   bob "}', "--user", "bob")
    assert added["result"]["text"] == "from bob"
    listed = kernel.cli_json("call", "notebook", "list_notes", "--user", "bob")
    assert [n["text"] for n in listed["result"]] == ["from bob"]  # bob's own database, not the first user's


@pytest.mark.parametrize("template", ["plain", "calls", "background", "tool"])
def test_every_other_template_tests_builds_and_installs_unchanged(world: tuple[KernelProc, str, Path], template: str) -> None:
    kernel, _, root = world
    name = f"made-{template}"
    _ok(kernel.cli("init", name, "--template", template, "--dir", str(root / name)))
    folder = root / name
    tested = kernel.cli_json("test", cwd=folder)
    assert tested["passed"] is True and " passed" in tested["output"], tested
    built = kernel.cli_json("build", cwd=folder)
    assert built.get("tools" if template == "tool" else "functions"), built
    installed = _ok(kernel.cli("install", ".", "--yes", cwd=folder))
    assert f"Installed {name} 0.1.0" in installed and "From: the local folder ." in installed
    if template == "calls":  # the grocery starter is installed: the call goes through the kernel
        done = kernel.cli_json("call", name, "remember_to_buy", '{"item": "oat milk"}')
        assert done["result"]["item"] == "oat milk"
