"""Finding 9 of issue 14 (local process ↔ kernel): the web app's automatic sign-in on
localhost goes only to a browser run by the OS account that started the kernel.

A real kernel on loopback; a second OS account (nobody) on the same machine asks for the
same pages and is sent to /login. DREAMER_LOCAL_SIGNIN=off and =any are checked too.
"""

from __future__ import annotations

import http.client
import os
import pwd
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernelproc import KernelProc, start_kernel

from dreamer.web.localpeer import peer_uid

SYSTEM_PYTHON = "/usr/bin/python3"
pytestmark = pytest.mark.timeout(300)

# Asks for / like a browser would, and prints the status and where it was sent.
ASK = """
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=20)
c.request("GET", "/", headers={"Host": "127.0.0.1:" + sys.argv[1]})
r = c.getresponse()
print(r.status, r.getheader("location") or "", "dreamer_session" in (r.getheader("set-cookie") or ""), sep="|")
"""


def _other_account() -> int:
    if os.geteuid() != 0:
        pytest.skip("switching to another OS account needs root")
    if not Path(SYSTEM_PYTHON).exists():
        pytest.skip(f"{SYSTEM_PYTHON} is not installed")
    return pwd.getpwnam("nobody").pw_uid


def _ask(port: int, uid: int | None = None) -> tuple[int, str, bool]:
    """GET / as this process's account, or as `uid` in a child process."""
    if uid is None:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        c.request("GET", "/", headers={"Host": f"127.0.0.1:{port}"})
        r = c.getresponse()
        return r.status, r.getheader("location") or "", "dreamer_session" in (r.getheader("set-cookie") or "")
    done = subprocess.run(
        [SYSTEM_PYTHON, "-I", "-c", ASK, str(port)], capture_output=True, text=True, timeout=60, cwd="/",
        preexec_fn=lambda: (os.setgroups([]), os.setgid(uid), os.setuid(uid)),
    )
    assert done.returncode == 0, done.stderr
    status, location, cookie = done.stdout.strip().split("|")
    return int(status), location, cookie == "True"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("signin") / "home")
    yield k
    k.stop()


def test_the_kernel_owner_is_signed_in_and_another_account_is_not(kernel: KernelProc) -> None:
    nobody = _other_account()
    status, _, cookie = _ask(kernel.port)
    assert status == 200 and cookie  # the owner's browser: signed in as the lone user
    status, location, cookie = _ask(kernel.port, nobody)
    assert status == 303 and location.startswith("/login") and not cookie
    # Many tries change nothing (no state an attacker could wear down).
    assert {_ask(kernel.port, nobody)[0] for _ in range(3)} == {303}


def test_peer_uid_names_the_account_behind_a_loopback_socket() -> None:
    nobody = _other_account()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        child = subprocess.Popen(
            [SYSTEM_PYTHON, "-I", "-c",
             f"import socket,time; s=socket.create_connection(('127.0.0.1',{port})); s.recv(1)"],
            preexec_fn=lambda: (os.setgroups([]), os.setgid(nobody), os.setuid(nobody)),
        )
        try:
            conn, addr = server.accept()
            with conn:
                assert peer_uid(addr, conn.getsockname()) == nobody
                conn.send(b"x")
        finally:
            child.wait(10)
        with socket.create_connection(("127.0.0.1", port)) as mine:
            conn, addr = server.accept()
            with conn:
                assert peer_uid(addr, conn.getsockname()) == os.geteuid()
                assert peer_uid(("127.0.0.1", 1), conn.getsockname()) is None  # no such connection
                assert peer_uid(("not an address", 1), conn.getsockname()) is None
            del mine


@pytest.mark.parametrize("mode", ["off", "any"])
def test_the_sign_in_rule_is_the_administrators_choice(mode: str, tmp_path: Path) -> None:
    nobody = _other_account()
    k = start_kernel(tmp_path / "home", {"DREAMER_LOCAL_SIGNIN": mode})
    try:
        mine, theirs = _ask(k.port)[0], _ask(k.port, nobody)[0]
    finally:
        k.stop()
    assert (mine, theirs) == ((303, 303) if mode == "off" else (200, 200))
