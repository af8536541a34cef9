"""`dreamer init`'s template: a bundle whose manifest validates and whose function runs in the worker."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from agent_worker import Worker

from dreamer.cli.scaffold import ScaffoldError, module_name, package_name, scaffold
from dreamer.contracts.manifest import load_manifest
from dreamer.sdk.templates import bundle_files


def test_scaffold_writes_a_valid_bundle(tmp_path: Path) -> None:
    made = scaffold("my-agent", tmp_path / "my-agent")
    assert made == tmp_path / "my-agent"
    files = sorted(str(p.relative_to(made)) for p in made.rglob("*") if p.is_file())
    assert files == ["README.md", "agent.yaml", "my_agent/__init__.py", "my_agent/server.py", "tests/conftest.py", "tests/test_server.py"]
    for path in made.rglob("*"):
        if path.is_file():
            assert "{{" not in path.read_text(), path
    manifest = load_manifest(made)
    assert (manifest.name, manifest.entry, manifest.kind, manifest.title) == ("my-agent", "my_agent.server", "agent", "My Agent")
    assert manifest.permissions.all == []
    assert "dreamer test" in (made / "README.md").read_text() and "dreamer pack" in (made / "README.md").read_text()


def test_the_package_is_never_spelled_like_the_bundle(tmp_path: Path) -> None:
    """So that inside the bundle folder `dreamer install hello` cannot be mistaken for a path."""
    assert package_name("hello") == "hello_agent" and package_name("my-agent") == "my_agent"
    assert package_name("calendar") == "calendar_agent" and module_name("hello") == "hello"
    made = scaffold("hello", tmp_path / "hello")
    assert load_manifest(made).entry == "hello_agent.server" and not (made / "hello").exists()


def test_the_coders_starting_point_is_unchanged() -> None:
    """The coder agent's scaffold starts from the plain files without tests, its package named by module_name."""
    files = bundle_files("echo")
    assert sorted(files) == ["README.md", "agent.yaml", "echo/__init__.py", "echo/server.py"]
    assert "import keyword" not in files["echo/server.py"] and "_TAKEN" not in files["echo/server.py"]


def test_the_scaffolded_function_runs_in_the_worker(tmp_path: Path, start_worker: Callable[..., Worker]) -> None:
    made = scaffold("hello-world", tmp_path / "hw")
    worker = start_worker(made, load_manifest(made).entry, "hello-world")
    spec = worker.describe()["hello"]
    assert spec["exported"] and spec["description"] == "Greet someone by name."
    assert spec["parameters"]["properties"]["name"]["default"] == "world"
    assert worker.invoke("hello", {"name": "Ada"}) == "Hello, Ada!"
    assert worker.invoke("hello") == "Hello, world!"
    assert worker.logs[0]["message"] == "greeting someone" and worker.logs[0]["fields"] == {"name": "Ada"}


def test_a_name_that_clashes_with_the_standard_library_gets_its_own_module(
    tmp_path: Path, start_worker: Callable[..., Worker]
) -> None:
    assert module_name("calendar") == "calendar_agent"
    assert module_name("my-json") == "my_json"
    made = scaffold("calendar", tmp_path / "calendar")
    assert load_manifest(made).entry == "calendar_agent.server"
    worker = start_worker(made, "calendar_agent.server", "calendar")
    assert worker.invoke("hello", {"name": "Bo"}) == "Hello, Bo!"


@pytest.mark.parametrize("name", ["", "a", "A", "Agent", "1abc", "my_agent", "../evil", "a/b", "héllo", "a" * 64, "-x"])
def test_bad_names_are_refused_and_nothing_is_written(tmp_path: Path, name: str) -> None:
    dest = tmp_path / "out"
    with pytest.raises(ScaffoldError) as err:
        scaffold(name, dest)
    assert err.value.code == "invalid_argument"
    assert "not a valid agent name" in str(err.value) and "\n" not in str(err.value)
    assert not dest.exists()


def test_a_non_empty_folder_is_refused_and_left_alone(tmp_path: Path) -> None:
    dest = tmp_path / "busy"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine")
    with pytest.raises(ScaffoldError) as err:
        scaffold("busy", dest)
    assert err.value.code == "conflict" and "not empty" in str(err.value)
    assert [p.name for p in dest.iterdir()] == ["notes.txt"]
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ScaffoldError):
        scaffold("file", a_file)
    assert a_file.read_text() == "x"


def test_an_empty_folder_is_used(tmp_path: Path) -> None:
    dest = tmp_path / "empty"
    dest.mkdir()
    assert load_manifest(scaffold("empty", dest)).name == "empty"
