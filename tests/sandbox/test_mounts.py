"""Granted folders (`fs:` / `fs.ro:`): which are refused, and what the sandbox shows of them."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from sandbox_helpers import Layout, make_spec, reported, run_code, run_spec

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox import Mount, Sandbox, SandboxSpec, get_sandbox
from dreamer.kernel.permissions.folders import FolderBounds
from dreamer.kernel.sandbox.mounts import check_target, mounts_env, mounts_for, pin, program_folders


def admin(home: Path) -> FolderBounds:
    """The administrator's bounds: only what no one may bind is refused (per-user roots:
    tests/security/test_fs_grant_bounds.py)."""
    return FolderBounds(user="admin", is_admin=True, home=home)

# -- which folders may be granted -------------------------------------------------------


@pytest.fixture
def user_files(tmp_path: Path) -> Path:
    """A user's folders next to (not inside) the installation."""
    root = tmp_path / "user"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "todo.txt").write_text("buy milk\n")
    (root / "work" / "notes").mkdir(parents=True)
    (root / "code").mkdir()
    (root / "outside").mkdir()
    (root / "outside" / "secret.txt").write_text("not granted\n")
    return root


def test_granted_folders_become_mounts_in_mnt(layout: Layout, user_files: Path) -> None:
    mounts = mounts_for([f"fs.ro:{user_files}/notes", f"fs:{user_files}/code", "llm", "agent:grocery"], admin(layout.home))
    assert mounts == [
        Mount(source=user_files / "code", target="/mnt/code", writable=True),
        Mount(source=user_files / "notes", target="/mnt/notes", writable=False),
    ]


def test_names_are_unique_and_stable(layout: Layout, user_files: Path) -> None:
    grants = [f"fs:{user_files}/work/notes", f"fs.ro:{user_files}/notes"]
    first = mounts_for(grants, admin(layout.home))
    again = mounts_for(list(reversed(grants)), admin(layout.home))
    assert first == again
    assert [(m.source, m.target) for m in first] == [
        (user_files / "notes", "/mnt/notes"),
        (user_files / "work" / "notes", "/mnt/notes-2"),
    ]


def test_writable_wins_when_a_folder_is_granted_both_ways(layout: Layout, user_files: Path) -> None:
    mounts = mounts_for([f"fs.ro:{user_files}/notes", f"fs:{user_files}/notes/"], admin(layout.home))
    assert mounts == [Mount(source=user_files / "notes", target="/mnt/notes", writable=True)]


def test_mounts_env_names_each_folder_by_its_grant(layout: Layout, user_files: Path) -> None:
    mounts = mounts_for([f"fs.ro:{user_files}/notes", f"fs:{user_files}/code"], admin(layout.home))
    assert json.loads(mounts_env(mounts)) == {
        "/mnt/notes": f"fs.ro:{user_files}/notes",
        "/mnt/code": f"fs:{user_files}/code",
    }
    assert json.loads(mounts_env(mounts, remapped=False)) == {
        str(user_files / "notes"): f"fs.ro:{user_files}/notes",
        str(user_files / "code"): f"fs:{user_files}/code",
    }


def _refusal(grant: str, home: Path) -> DreamerError:
    with pytest.raises(DreamerError) as caught:
        mounts_for([grant], admin(home))
    message = caught.value.message
    assert grant in message and "\n" not in message and "Traceback" not in message
    return caught.value


@pytest.mark.parametrize("folder", ["/", "/etc", "/usr", "/usr/share", "/proc", "/sys/kernel", "/dev", "/boot", "/home", "/tmp", "/var/lib"])
def test_system_and_shared_folders_are_refused(layout: Layout, folder: str) -> None:
    if not Path(folder).is_dir():
        pytest.skip(f"{folder} does not exist here")
    for kind in ("fs", "fs.ro"):
        assert _refusal(f"{kind}:{folder}", layout.home).code == "permission_denied"


def test_dreamer_home_is_refused_itself_inside_and_around(layout: Layout, tmp_path: Path) -> None:
    for folder in (layout.home, layout.data, layout.home / "users", tmp_path):
        error = _refusal(f"fs.ro:{folder}", layout.home)
        assert error.code == "permission_denied"
        assert "dreamer's own data folder" in error.message


def test_missing_folder_and_plain_file_are_refused(layout: Layout, user_files: Path) -> None:
    assert "does not exist" in _refusal(f"fs:{user_files}/nowhere", layout.home).message
    assert "is not a folder" in _refusal(f"fs:{user_files}/notes/todo.txt", layout.home).message


def test_dotdot_is_refused(layout: Layout, user_files: Path) -> None:
    error = _refusal(f"fs:{user_files}/notes/../outside", layout.home)
    assert error.code == "invalid_argument"
    assert "'..'" in error.message


def test_a_symlink_on_the_path_is_refused_and_the_real_folder_named(layout: Layout, user_files: Path) -> None:
    (user_files / "shortcut").symlink_to(user_files / "outside")
    (user_files / "via").symlink_to(user_files)
    for grant in (f"fs:{user_files}/shortcut", f"fs.ro:{user_files}/via/notes"):
        error = _refusal(grant, layout.home)
        assert error.code == "permission_denied"
        assert "symbolic link" in error.message
    assert str(user_files / "outside") in _refusal(f"fs:{user_files}/shortcut", layout.home).message


def test_a_symlink_into_dreamer_home_is_refused(layout: Layout, user_files: Path) -> None:
    (user_files / "data").symlink_to(layout.data)
    assert _refusal(f"fs.ro:{user_files}/data", layout.home).code == "permission_denied"


def test_program_folders_may_be_read_but_not_written(layout: Layout) -> None:
    folder = program_folders()[0]
    error = _refusal(f"fs:{folder}", layout.home)
    assert "fs.ro:" in error.message
    assert mounts_for([f"fs.ro:{folder}"], admin(layout.home))[0].writable is False


def test_a_target_outside_mnt_is_refused() -> None:
    for target in ("/data", "/mnt", "/mnt/", "/mnt/a/b", "/mnt/..", "/agent/x"):
        with pytest.raises(DreamerError):
            check_target(target)
    check_target("/mnt/notes")


def test_pin_refuses_a_folder_swapped_after_the_check(layout: Layout, user_files: Path) -> None:
    mounts = mounts_for([f"fs:{user_files}/work/notes"], admin(layout.home))
    # Between the check and the start, the path is made to lead elsewhere.
    (user_files / "work").rename(user_files / "work-real")
    (user_files / "outside" / "notes").mkdir()
    (user_files / "work").symlink_to(user_files / "outside")
    with pytest.raises(DreamerError) as caught:
        pin(mounts)
    assert caught.value.code == "permission_denied"
    assert "replaced" in caught.value.message


def test_pin_holds_the_checked_folder(layout: Layout, user_files: Path) -> None:
    mounts = mounts_for([f"fs:{user_files}/notes"], admin(layout.home))
    fds = pin(mounts)
    try:
        assert os.readlink(f"/proc/self/fd/{fds[0]}") == str(user_files / "notes")
    finally:
        for fd in fds:
            os.close(fd)


# -- what a bwrap worker sees -------------------------------------------------------------

SEE = """
import errno, json, os, sys
target = sys.argv[1]
report = {"env": json.loads(os.environ.get("DREAMER_MOUNTS", "null")), "mnt": sorted(os.listdir("/mnt"))}
report["read"] = open(os.path.join(target, "todo.txt")).read()
try:
    with open(os.path.join(target, "from-agent.txt"), "w") as f:
        f.write("hello from the sandbox")
    report["write"] = "written"
except OSError as error:
    report["write"] = errno.errorcode[error.errno]
print(json.dumps(report))
"""


def _spec(layout: Layout, code: str, mounts: list[Mount], *args: str) -> SandboxSpec:
    base = make_spec(layout, code, args=args)
    return SandboxSpec(base.bundle_dir, base.data_dir, base.env, base.limits, base.argv, mounts)


def _run(sandbox: Sandbox, spec: SandboxSpec) -> dict[str, object]:
    return reported(asyncio.run(run_spec(sandbox, spec)))


def test_read_only_folder_is_readable_not_writable(bwrap: Sandbox, layout: Layout, user_files: Path) -> None:
    mounts = mounts_for([f"fs.ro:{user_files}/notes"], admin(layout.home))
    report = _run(bwrap, _spec(layout, SEE, mounts, "/mnt/notes"))
    assert report["env"] == {"/mnt/notes": f"fs.ro:{user_files}/notes"}
    assert report["mnt"] == ["notes"]
    assert report["read"] == "buy milk\n"
    assert report["write"] == "EROFS"
    assert not (user_files / "notes" / "from-agent.txt").exists()


def test_writable_folder_takes_writes_that_land_on_the_host(bwrap: Sandbox, layout: Layout, user_files: Path) -> None:
    mounts = mounts_for([f"fs:{user_files}/notes"], admin(layout.home))
    report = _run(bwrap, _spec(layout, SEE, mounts, "/mnt/notes"))
    assert report["write"] == "written"
    assert (user_files / "notes" / "from-agent.txt").read_text() == "hello from the sandbox"


def test_only_granted_folders_are_there(bwrap: Sandbox, layout: Layout, user_files: Path) -> None:
    report = reported(
        run_code(
            bwrap,
            layout,
            f"""
            import json, os
            probes = {json.dumps([str(user_files), str(user_files / "notes"), str(user_files / "outside")])}
            print(json.dumps({{"mnt": os.path.exists("/mnt"), "host": [p for p in probes if os.path.exists(p)],
                              "env": os.environ.get("DREAMER_MOUNTS")}}))
            """,
        )
    )
    assert report == {"mnt": False, "host": [], "env": None}


def test_a_symlink_inside_pointing_out_dangles(bwrap: Sandbox, layout: Layout, user_files: Path) -> None:
    notes = user_files / "notes"
    (notes / "escape").symlink_to(user_files / "outside")
    (notes / "escape-file").symlink_to(user_files / "outside" / "secret.txt")
    (notes / "escape-rel").symlink_to("../outside")
    (notes / "inside").symlink_to("todo.txt")
    mounts = mounts_for([f"fs:{notes}"], admin(layout.home))
    code = """
        import json, os
        def read(path):
            try:
                return open(path).read()
            except OSError as error:
                return type(error).__name__
        print(json.dumps({
            "abs_dir": os.path.exists("/mnt/notes/escape/secret.txt"),
            "abs_file": read("/mnt/notes/escape-file"),
            "rel_dir": os.path.exists("/mnt/notes/escape-rel/secret.txt"),
            "inside": read("/mnt/notes/inside"),
        }))
    """
    report = _run(bwrap, _spec(layout, code, mounts))
    assert report == {"abs_dir": False, "abs_file": "FileNotFoundError", "rel_dir": False, "inside": "buy milk\n"}


def test_a_folder_swapped_for_a_link_before_the_start_is_not_bound(
    bwrap: Sandbox, layout: Layout, user_files: Path
) -> None:
    mounts = mounts_for([f"fs.ro:{user_files}/work/notes"], admin(layout.home))
    (user_files / "work").rename(user_files / "work-real")
    (user_files / "outside" / "notes").mkdir()
    (user_files / "work").symlink_to(user_files / "outside")
    with pytest.raises(DreamerError) as caught:
        asyncio.run(run_spec(bwrap, _spec(layout, "print('{}')", mounts)))
    assert caught.value.code == "permission_denied"


def test_unconfined_names_folders_by_their_host_path(layout: Layout, user_files: Path) -> None:
    mounts = mounts_for([f"fs.ro:{user_files}/notes"], admin(layout.home))
    host = str(user_files / "notes")
    report = _run(get_sandbox("none"), _spec(layout, SEE, mounts, host))
    assert report["env"] == {host: f"fs.ro:{host}"}
    assert report["read"] == "buy milk\n"
