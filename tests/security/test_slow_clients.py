"""Finding 4 of issue 14: half-open and slow connections must not freeze the kernel.

A real kernel, started with the file-descriptor limit an ordinary account has (1024),
is attacked over loopback with thousands of sockets that never finish their headers,
with a slowloris that trickles one header byte at a time, a stalled request body and an
idle keep-alive connection. /healthz keeps answering, and each slow client is dropped.
"""

from __future__ import annotations

import resource
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from kernelproc import KernelProc, start_kernel

from dreamer.kernel.connguard import connection_cap

FLOOD = 3000  # more sockets than the kernel has descriptors
KERNEL_FDS = 1024
HEADER_TIMEOUT = 2.0
BODY_TIMEOUT = 2.0

pytestmark = pytest.mark.timeout(400)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < FLOOD + 500:
        pytest.skip(f"the hard descriptor limit ({hard}) is below what the flood needs")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else FLOOD * 4, hard))
    root = tmp_path_factory.mktemp("slow")
    env = {"DREAMER_HEADER_TIMEOUT": str(HEADER_TIMEOUT), "DREAMER_BODY_TIMEOUT": str(BODY_TIMEOUT),
           "DREAMER_KEEPALIVE_TIMEOUT": "2"}
    # The kernel's soft and hard limits are 1024, so it cannot lift them: the flood is bigger.
    k = start_kernel(root / "home", env, wrapper=["prlimit", f"--nofile={KERNEL_FDS}:{KERNEL_FDS}", "--"])
    yield k
    k.stop()
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _open_fds(pid: int) -> int:
    import os

    return len(os.listdir(f"/proc/{pid}/fd"))


def _healthz(k: KernelProc, timeout: float = 10) -> float:
    started = time.monotonic()
    with httpx.Client(base_url=k.url, timeout=timeout) as c:
        assert c.get("/healthz").status_code == 200
    return time.monotonic() - started


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the kernel closes this socket within `within` seconds."""
    sock.settimeout(within)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def _half_open(k: KernelProc, n: int) -> list[socket.socket]:
    """n sockets that each send half a request and then nothing."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", k.port))
        except BlockingIOError:
            pass
        socks.append(s)
    deadline = time.monotonic() + 30
    pending = list(socks)
    while pending and time.monotonic() < deadline:
        left = []
        for s in pending:
            try:
                s.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            except (BlockingIOError, OSError):
                left.append(s)
        pending = left
        if pending:
            time.sleep(0.01)
    return socks


def test_a_flood_of_half_open_sockets_leaves_healthz_answering(kernel: KernelProc) -> None:
    socks = _half_open(kernel, FLOOD)
    try:
        # Within the header timeout, while every flood socket is still open on this side.
        assert _healthz(kernel) < 5
        assert _open_fds(kernel.process.pid) < KERNEL_FDS - 64  # the cap kept descriptors free
        with httpx.Client(base_url=kernel.url, timeout=10, headers={"Authorization": f"Bearer {kernel.token}"}) as c:
            assert c.get("/v1/agents").status_code == 200  # an authenticated call, too
        # After the header deadline, the kernel has dropped every one of them.
        time.sleep(HEADER_TIMEOUT + 1)
        assert all(_closed_by_server(s, 2) for s in socks[-50:])
        assert all(_closed_by_server(s, 0.5) for s in socks[:200])
    finally:
        for s in socks:
            s.close()
    assert _healthz(kernel) < 5


def test_a_slowloris_is_dropped_at_the_header_deadline_however_it_trickles(kernel: KernelProc) -> None:
    s = socket.create_connection(("127.0.0.1", kernel.port))
    try:
        s.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        dropped = False
        while time.monotonic() - started < HEADER_TIMEOUT * 4:
            try:
                s.send(b"X")  # one byte of an endless header, every 0.2 s
            except OSError:
                dropped = True
                break
            if _closed_by_server(s, 0.2):
                dropped = True
                break
        assert dropped and time.monotonic() - started < HEADER_TIMEOUT * 3
    finally:
        s.close()


def test_a_stalled_body_is_dropped_and_an_idle_keepalive_closed(kernel: KernelProc) -> None:
    s = socket.create_connection(("127.0.0.1", kernel.port))
    try:
        s.send(b"POST /v1/bundles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n" + b"x" * 10)
        assert _closed_by_server(s, BODY_TIMEOUT * 3)
    finally:
        s.close()
    s = socket.create_connection(("127.0.0.1", kernel.port))
    try:
        s.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.settimeout(5)
        assert s.recv(65536).startswith(b"HTTP/1.1 200")
        assert _closed_by_server(s, 6)  # keep-alive idle: gone after its timeout
    finally:
        s.close()


def test_a_request_sent_at_once_is_served_even_past_the_cap(kernel: KernelProc) -> None:
    """Idle connections are evicted oldest first; they never lock out a real request."""
    socks = _half_open(kernel, 200)
    try:
        for _ in range(5):
            assert _healthz(kernel) < 5
    finally:
        for s in socks:
            s.close()


def test_the_cap_leaves_half_the_descriptors() -> None:
    assert connection_cap(0, 1024) == 512
    assert connection_cap(100, 1024) == 100
    assert connection_cap(0, 1 << 20) == 4096
    assert connection_cap(0, 10) == 16
