"""pack → extract round trips, determinism, excludes and tree digests."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from pathlib import Path

import pytest

from dreamer.contracts.archive import DEFAULT_EXCLUDES, extract, pack, tree_digest
from dreamer.contracts.manifest import load_manifest
from dreamer.contracts.errors import DreamerError

LONG = "deep/" + "/".join(["segment-of-a-rather-long-path"] * 4) + "/file.txt"  # > 100 chars: needs pax


def _members(data: bytes) -> list[tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return tar.getmembers()


def test_round_trip_keeps_contents_folders_and_exec_bit(make_bundle, tmp_path: Path) -> None:
    src = make_bundle(files={"bin/run.sh": "#!/bin/sh\n", "data/blob.bin": bytes(range(256)) * 10, "données/é.txt": "ü", LONG: "far"})
    (src / "bin/run.sh").chmod(0o750)
    (src / "empty").mkdir()

    out = extract(pack(src), tmp_path / "out" / "grocery")

    assert out == tmp_path / "out" / "grocery"
    assert load_manifest(out).name == "grocery"
    assert (out / "data/blob.bin").read_bytes() == bytes(range(256)) * 10
    assert (out / "données/é.txt").read_text() == "ü"
    assert (out / LONG).read_text() == "far"
    assert (out / "empty").is_dir()
    assert (out / "bin/run.sh").stat().st_mode & 0o777 == 0o755
    assert (out / "agent.yaml").stat().st_mode & 0o777 == 0o644
    assert tree_digest(out) == tree_digest(src)


def test_pack_is_byte_for_byte_deterministic(make_bundle, tmp_path: Path) -> None:
    src = make_bundle()
    first = pack(src)
    # Different mtimes, permission noise and creation order must not change the bytes.
    for path in src.rglob("*"):
        os.utime(path, (1_000_000, 1_000_000))
    (src / "agent.yaml").chmod(0o600)
    assert pack(src) == first

    twin = tmp_path / "twin"
    twin.mkdir()
    for rel in sorted((p.relative_to(src) for p in src.rglob("*")), key=str, reverse=True):
        target = twin / rel
        if (src / rel).is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes((src / rel).read_bytes())
    assert pack(twin) == first


def test_pack_normalises_headers_and_gzip_mtime(make_bundle) -> None:
    src = make_bundle(files={"tool.py": "x"})
    (src / "tool.py").chmod(0o700)
    os.utime(src / "agent.yaml", (12345, 12345))
    data = pack(src)

    assert data[4:8] == b"\0\0\0\0", "gzip header mtime must be zero"
    members = {m.name: m for m in _members(data)}
    assert list(members) == ["agent.yaml", "grocery", "grocery/__init__.py", "grocery/server.py", "tool.py"]
    for member in members.values():
        assert (member.mtime, member.uid, member.gid, member.uname, member.gname) == (0, 0, 0, "", "")
        assert not member.name.startswith(("/", "./"))
    assert members["tool.py"].mode == 0o755
    assert members["agent.yaml"].mode == 0o644
    assert members["grocery"].isdir() and members["grocery"].mode == 0o755


def test_pack_skips_default_excludes_and_honours_custom_ones(make_bundle) -> None:
    src = make_bundle(
        files={
            "grocery/__pycache__/server.cpython-311.pyc": b"\0",
            "stale.pyc": b"\0",
            ".git/HEAD": "ref",
            ".venv/bin/python": "",
            ".DS_Store": b"\0",
            "notes/secret.key": "k",
        }
    )
    names = {m.name for m in _members(pack(src))}
    assert names == {"agent.yaml", "grocery", "grocery/__init__.py", "grocery/server.py", "notes", "notes/secret.key"}

    names = {m.name for m in _members(pack(src, exclude=(*DEFAULT_EXCLUDES, "*.key")))}
    assert "notes/secret.key" not in names and "notes" in names


def test_pack_stores_links_as_links_and_extract_refuses_them(make_bundle, refuse) -> None:
    src = make_bundle()
    (src / "passwd").symlink_to("/etc/passwd")
    data = pack(src)

    link = next(m for m in _members(data) if m.name == "passwd")
    assert link.issym() and link.linkname == "/etc/passwd"
    error = refuse(data)
    assert "'passwd'" in error.message and "symbolic link" in error.message


def test_pack_does_not_follow_a_linked_folder(make_bundle, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text("do not ship")
    src = make_bundle()
    (src / "vendor").symlink_to(outside, target_is_directory=True)
    names = {m.name for m in _members(pack(src))}
    assert "vendor" in names and "vendor/private.txt" not in names


@pytest.mark.parametrize("case", ["missing", "a_file", "no_manifest"])
def test_pack_refuses_what_is_not_a_bundle_folder(case: str, tmp_path: Path) -> None:
    target = tmp_path / "thing"
    if case == "a_file":
        target.write_text("x")
    elif case == "no_manifest":
        target.mkdir()
        (target / "main.py").write_text("")
    with pytest.raises(DreamerError) as caught:
        pack(target)
    assert caught.value.code == "invalid_bundle"
    if case == "no_manifest":
        assert "agent.yaml" in caught.value.message


def test_pack_refuses_a_fifo_in_the_folder(make_bundle) -> None:
    src = make_bundle()
    os.mkfifo(src / "pipe")
    with pytest.raises(DreamerError) as caught:
        pack(src)
    assert caught.value.code == "invalid_bundle" and "'pipe'" in caught.value.message


def test_tree_digest_ignores_mtimes_but_sees_content_names_exec_bit_and_folders(make_bundle) -> None:
    src = make_bundle()
    digest = tree_digest(src)
    assert len(digest) == 64 and digest == tree_digest(src)

    os.utime(src / "agent.yaml", (5, 5))
    assert tree_digest(src) == digest

    def changed(mutate, undo) -> None:
        mutate()
        assert tree_digest(src) != digest
        undo()
        assert tree_digest(src) == digest

    server = src / "grocery/server.py"
    changed(lambda: server.write_text("X = 2\n"), lambda: server.write_text("X = 1\n"))
    changed(lambda: server.chmod(0o755), lambda: server.chmod(0o644))
    changed(lambda: server.rename(src / "grocery/other.py"), lambda: (src / "grocery/other.py").rename(server))
    changed(lambda: (src / "empty").mkdir(), lambda: (src / "empty").rmdir())


def test_tree_digest_with_excludes_matches_the_packed_tree(make_bundle, tmp_path: Path) -> None:
    src = make_bundle(files={"grocery/__pycache__/x.pyc": b"\0"})
    out = extract(pack(src), tmp_path / "out")
    assert tree_digest(src) != tree_digest(out)
    assert tree_digest(src, exclude=DEFAULT_EXCLUDES) == tree_digest(out)


def test_gzip_of_pack_is_a_plain_tar(make_bundle) -> None:
    # Other tools (tar, GitHub, the gallery) must be able to read what we write.
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(pack(make_bundle()))), mode="r:") as tar:
        assert "agent.yaml" in tar.getnames()
