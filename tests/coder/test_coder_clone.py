"""open_workspace in-process: archives fetched by URL are unpacked safely; local repositories are cloned."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from dreamer.agents.coder.coder import clone, tools, workspace
from dreamer.agents.coder.coder.workspace import ToolError


@dataclass
class Answer:
    status: int
    content: bytes


def tarball(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return buffer.getvalue()


def fetcher(data: bytes, status: int = 200):
    asked = []

    def fetch(url: str, timeout: float, max_bytes: int) -> Answer:
        asked.append((url, max_bytes))
        return Answer(status, data)

    fetch.asked = asked  # type: ignore[attr-defined]
    return fetch


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv("DREAMER_DATA_DIR", str(folder))
    monkeypatch.delenv("DREAMER_MOUNTS", raising=False)
    return folder


def test_a_tarball_url_becomes_a_workspace_in_the_agents_data(data: Path) -> None:
    archive = tarball({"proj-main/app.py": b"def main():\n    return 1\n", "proj-main/README.md": b"# proj\n"},
                      links={"proj-main/etc": "/etc"})
    fetch = fetcher(archive)
    ws = clone.open_workspace("https://example.com/proj/archive/main.tar.gz", fetch=fetch)
    assert ws.root == (data / "workspaces" / "main").resolve() and workspace.current() == ws
    assert sorted(os.listdir(ws.root)) == ["README.md", "app.py"]  # the link was left out
    assert tools.search(ws, "main")["results"][0]["path"] == "app.py"
    assert fetch.asked[0][1] == clone.MAX_ARCHIVE_BYTES


@pytest.mark.parametrize("name", ["../evil.py", "/abs/evil.py", "a/../../evil.py"])
def test_an_archive_with_an_unsafe_path_is_refused_whole(data: Path, name: str) -> None:
    archive = tarball({"ok/fine.py": b"x = 1\n", name: b"pwned\n"})
    with pytest.raises(ToolError) as caught:
        clone.open_workspace("https://example.com/x.tgz", name="evil", fetch=fetcher(archive))
    assert caught.value.code == "invalid_archive" and "unsafe path" in caught.value.message
    assert not (data / "workspaces" / "evil").exists() and not (data / "evil.py").exists()
    assert [p.name for p in (data / "workspaces").iterdir()] == []


def test_zip_archives_bad_archives_and_git_urls(data: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("lib/util.py", "def helper():\n    pass\n")
    ws = clone.open_workspace("https://example.com/lib.zip", fetch=fetcher(buffer.getvalue()))
    assert (ws.root / "util.py").is_file()
    for url, code in (("https://example.com/bad.tar.gz", "invalid_archive"), ("https://example.com/repo.git", "not_available")):
        with pytest.raises(ToolError) as caught:
            clone.open_workspace(url, fetch=fetcher(b"not an archive"))
        assert caught.value.code == code
    with pytest.raises(ToolError) as caught:
        clone.open_workspace("https://example.com/gone.zip", fetch=fetcher(b"", status=404))
    assert "HTTP 404" in caught.value.message
    with pytest.raises(ToolError):
        clone.open_workspace("https://example.com/lib.zip", fetch=fetcher(buffer.getvalue()))  # the name is taken


def test_a_local_repository_is_cloned_and_the_original_left_alone(data: Path, repo: Path) -> None:
    ws = clone.open_workspace(str(repo), name="copy")
    assert ws.source.startswith("clone:git clone") and (ws.root / ".git").is_dir()
    tools.write(ws, "new.py", "X = 1\n")
    assert not (repo / "new.py").exists() and tools.diff(ws)["files"] == ["new.py"]
    with pytest.raises(ToolError) as caught:
        clone.open_workspace(str(repo.parent / "missing"))
    assert caught.value.code == "not_found"
