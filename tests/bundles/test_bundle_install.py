"""install_copy seals a read-only copy in one step; remove_tree takes it down again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dreamer.contracts.archive import install_copy, remove_tree, tree_digest
from dreamer.contracts.errors import DreamerError

NOBODY = 65534


def _as_unprivileged(code: str, owned: Path) -> subprocess.CompletedProcess[str]:
    """Run Python as a user that owns `owned` but is not root, so permission bits really bite."""
    argv = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv; cannot drop privileges to test permissions")
        for path in [owned, *owned.rglob("*")]:
            os.lchown(path, NOBODY, NOBODY)
        os.chown(owned.parent, NOBODY, NOBODY)
        argv = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


@pytest.fixture
def reachable(tmp_path: Path) -> Iterator[Path]:
    """A folder another user can reach (pytest's tmp_path sits under a 0700 folder when run as root)."""
    folder = Path(tempfile.mkdtemp(prefix="dreamer-bundles-"))
    folder.chmod(0o755)
    yield folder
    remove_tree(folder)


def _modes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_mode & 0o7777 for p in [root, *root.rglob("*")]}


def test_install_copy_is_read_only_and_identical(make_bundle, tmp_path: Path) -> None:
    src = make_bundle(files={"bin/run.sh": "#!/bin/sh\n"})
    (src / "bin/run.sh").chmod(0o755)
    (src / "empty").mkdir()
    dst = tmp_path / "bundles" / "grocery" / "1.0.0"  # parents do not exist yet

    install_copy(src, dst)

    assert _modes(dst) == {
        ".": 0o555,
        "agent.yaml": 0o444,
        "bin": 0o555,
        "bin/run.sh": 0o555,
        "empty": 0o555,
        "grocery": 0o555,
        "grocery/__init__.py": 0o444,
        "grocery/server.py": 0o444,
    }
    assert tree_digest(dst) == tree_digest(src)
    assert sorted(p.name for p in dst.parent.iterdir()) == ["1.0.0"], "no staging sibling may remain"
    assert src.stat().st_mode & 0o777 != 0o555, "the source is left as it was"


def test_installed_tree_cannot_be_written_by_its_owner(make_bundle, reachable: Path) -> None:
    dst = reachable / "store" / "grocery"
    install_copy(make_bundle(), dst)
    code = f"""
import os, sys
assert os.access({str(dst / 'agent.yaml')!r}, os.R_OK), "the tree must be reachable for this test to mean anything"
for attempt in (lambda: open({str(dst / 'agent.yaml')!r}, 'a'), lambda: open({str(dst / 'new.py')!r}, 'w')):
    try:
        attempt()
    except PermissionError:
        continue
    sys.exit('write allowed')
"""
    result = _as_unprivileged(code, dst)
    assert result.returncode == 0, result.stderr


def test_install_copy_conflict_leaves_the_existing_tree(make_bundle, tmp_path: Path) -> None:
    src = make_bundle()
    dst = tmp_path / "store" / "grocery"
    dst.mkdir(parents=True)
    (dst / "old.txt").write_text("old")
    with pytest.raises(DreamerError) as caught:
        install_copy(src, dst)
    assert caught.value.code == "conflict"
    assert [p.name for p in dst.iterdir()] == ["old.txt"]
    assert [p.name for p in dst.parent.iterdir()] == ["grocery"]


def test_install_copy_refuses_links_and_leaves_nothing(make_bundle, tmp_path: Path) -> None:
    src = make_bundle()
    (src / "zz-link").symlink_to("/etc/passwd")
    dst = tmp_path / "store" / "grocery"
    with pytest.raises(DreamerError) as caught:
        install_copy(src, dst)
    assert caught.value.code == "invalid_bundle" and "'zz-link'" in caught.value.message
    assert list(dst.parent.iterdir()) == []


def test_remove_tree_takes_down_a_sealed_tree_as_its_owner(make_bundle, reachable: Path) -> None:
    dst = reachable / "store" / "grocery"
    install_copy(make_bundle(), dst)
    code = f"""
import os
from pathlib import Path
assert os.access({str(dst / 'agent.yaml')!r}, os.R_OK), "the tree must be reachable for this test to mean anything"
from dreamer.contracts.archive import remove_tree
remove_tree(Path({str(dst)!r}))
"""
    result = _as_unprivileged(code, dst)
    assert result.returncode == 0, result.stderr
    assert not dst.exists()


def test_remove_tree_does_not_follow_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep")
    outside.chmod(0o555)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link").symlink_to(outside, target_is_directory=True)
    remove_tree(tree)
    assert not tree.exists()
    assert (outside / "precious.txt").read_text() == "keep"
    assert outside.stat().st_mode & 0o777 == 0o555, "the link's target must not be chmodded"


def test_remove_tree_of_a_missing_path_is_quiet(tmp_path: Path) -> None:
    remove_tree(tmp_path / "never-was")
