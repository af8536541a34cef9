"""File access as a permission, through a real kernel: `fs:` / `fs.ro:` folders at /mnt/<name>."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelproc import KernelProc, write_bundle

FILES = '''
import errno, os
from dreamer.sdk import Context, function

@function
def look(ctx: Context) -> dict:
    """What the agent sees of its granted folders."""
    seen = {}
    for where, scope in ctx.mounts.items():
        try:
            seen[where] = {"scope": scope, "files": sorted(os.listdir(where))}
        except OSError as error:
            seen[where] = {"scope": scope, "files": errno.errorcode[error.errno]}
    return {"mounts": seen, "mnt": sorted(os.listdir("/mnt")) if os.path.isdir("/mnt") else None}

@function
def read(ctx: Context, path: str) -> str:
    """Reads a file."""
    with open(path) as f:
        return f.read()

@function
def write(ctx: Context, path: str, text: str) -> str:
    """Writes a file, or says why it could not."""
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as error:
        return errno.errorcode[error.errno]
    return "written"
'''


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "user" / "notes"
    folder.mkdir(parents=True)
    (folder / "todo.txt").write_text("call mum\n")
    return folder


def _install(kernel: KernelProc, root: Path, name: str, *, optional: list[str] = (), required: list[str] = (),
             without: list[str] = ()) -> None:
    bundle = write_bundle(root, name, FILES, optional=list(optional), required=list(required))
    args = ["install", str(bundle), "--yes"]
    for scope in optional:  # optional scopes are off unless turned on
        if scope not in without:
            args += ["--grant", scope]
    for scope in without:
        args += ["--without", scope]
    done = kernel.cli(*args)
    assert done.returncode == 0, done.stderr + done.stdout


# Calls go over HTTP (a CLI process per call is slow on a busy machine); grants and
# revocations go through the `dreamer` command, as a person would.
def _answer(kernel: KernelProc, agent: str, function: str, args: dict[str, object]) -> tuple[int, dict]:
    with kernel.client() as client:
        response = client.post(f"/v1/agents/{agent}/functions/{function}", json={"args": args})
    return response.status_code, response.json()


def _call(kernel: KernelProc, agent: str, function: str, **args: object) -> object:
    status, body = _answer(kernel, agent, function, args)
    assert status == 200, body
    return body["result"]


def _error(kernel: KernelProc, agent: str, function: str, **args: object) -> dict[str, str]:
    status, body = _answer(kernel, agent, function, args)
    assert status >= 400, body
    return body["error"]


def test_a_read_only_folder_is_read_then_gone_after_revoke(kernel: KernelProc, tmp_path: Path, notes: Path) -> None:
    scope = f"fs.ro:{notes}"
    _install(kernel, tmp_path, "reader", optional=[scope])
    assert _call(kernel, "reader", "look") == {
        "mounts": {"/mnt/notes": {"scope": scope, "files": ["todo.txt"]}},
        "mnt": ["notes"],
    }
    assert _call(kernel, "reader", "read", path="/mnt/notes/todo.txt") == "call mum\n"
    assert _call(kernel, "reader", "write", path="/mnt/notes/todo.txt", text="gone") == "EROFS"
    assert (notes / "todo.txt").read_text() == "call mum\n"

    done = kernel.cli("revoke", "reader", scope)
    assert done.returncode == 0, done.stderr
    # The very next call runs in a worker without the folder.
    assert _call(kernel, "reader", "look") == {"mounts": {}, "mnt": None}
    assert _error(kernel, "reader", "read", path="/mnt/notes/todo.txt")["code"] == "agent_error"

    done = kernel.cli("grant", "reader", scope)
    assert done.returncode == 0, done.stderr
    assert _call(kernel, "reader", "read", path="/mnt/notes/todo.txt") == "call mum\n"


def test_install_without_the_scope_leaves_the_folder_out(kernel: KernelProc, tmp_path: Path, notes: Path) -> None:
    scope = f"fs.ro:{notes}"
    _install(kernel, tmp_path, "declined", optional=[scope], without=[scope])
    perms = {p["scope"]: p for p in kernel.cli_json("permissions", "declined")}
    assert perms[scope]["granted"] is False
    assert _call(kernel, "declined", "look") == {"mounts": {}, "mnt": None}


def test_a_writable_folder_takes_writes_that_land_on_the_host(kernel: KernelProc, tmp_path: Path, notes: Path) -> None:
    _install(kernel, tmp_path, "writer", required=[f"fs:{notes}"])
    assert _call(kernel, "writer", "write", path="/mnt/notes/new.txt", text="from the agent") == "written"
    assert (notes / "new.txt").read_text() == "from the agent"


def test_refused_folders_are_refused_at_install_in_one_sentence(kernel: KernelProc, tmp_path: Path) -> None:
    # Folder bounds are checked when the folder is granted (here: at install), not only at the call.
    for scope, words in (("fs.ro:/etc", "/etc"), (f"fs.ro:{kernel.home / 'users'}", str(kernel.home / "users"))):
        bundle = write_bundle(tmp_path / scope.replace("/", "_"), "greedy-reader", FILES, optional=[scope])
        done = kernel.cli("install", str(bundle), "--yes", "--grant", scope)
        assert done.returncode != 0
        message = (done.stderr + done.stdout).strip()
        assert words in message, message
    assert kernel.cli_json("agents") and all(a["name"] != "greedy-reader" for a in kernel.cli_json("agents"))


def test_a_folder_replaced_by_a_link_is_refused_at_the_next_start(kernel: KernelProc, tmp_path: Path) -> None:
    folder = tmp_path / "user" / "project"
    folder.mkdir(parents=True)
    scope = f"fs.ro:{folder}"
    _install(kernel, tmp_path, "linked", optional=[scope])
    assert _call(kernel, "linked", "look")["mnt"] == ["project"]
    # Revoke and grant again: the warm worker goes, the next one checks the path anew.
    assert kernel.cli("revoke", "linked", scope).returncode == 0
    folder.rmdir()
    folder.symlink_to(kernel.home)
    # Granting it again checks the path anew: it now leads through a link, so it is refused.
    done = kernel.cli("grant", "linked", scope)
    assert done.returncode != 0 and "symbolic link" in done.stderr + done.stdout
    assert _call(kernel, "linked", "look")["mnt"] is None
