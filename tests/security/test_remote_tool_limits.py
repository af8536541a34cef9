"""Remote (streamable-HTTP) tool servers: capped answers and no SSRF (issue 24, findings 5 and 6).

A real hostile MCP server on loopback (hostile_http_tool.py) answers 400 MB by
Content-Length, 64 MiB chunked, or one 64 MiB server-sent event; the kernel refuses
each past the 8 MiB message cap, and another user's /healthz stays fast meanwhile.
An ordinary user's bundle naming a loopback URL, in any spelling, makes the kernel
send nothing: not while it is reviewed, not after it is approved.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from kernelproc import KernelProc, free_port, start_kernel

from dreamer.contracts.archive import pack

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.timeout(300)


@dataclass
class Hostile:
    port: int
    log: Path

    def requests(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    root = tmp_path_factory.mktemp("hostile")
    port = free_port()
    log = root / "requests.log"
    process = subprocess.Popen([sys.executable, str(HERE / "hostile_http_tool.py"), str(port), str(log)])
    try:
        for _ in range(600):  # listening yet? (a GET of /mcp would open a stream and wait)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        log.write_text("")
        yield Hostile(port, log)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:  # still writing its endless answer to a busy machine
            process.kill()
            process.wait(10)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    k = start_kernel(tmp_path_factory.mktemp("remote") / "home", {"DREAMER_TOOL_TIMEOUT": "20"}, wait_s=240)
    yield k
    k.stop()


@pytest.fixture(scope="module")
def alice(kernel: KernelProc) -> str:
    return kernel.cli_json("users", "add", "alice")["token"]


def _bundle(root: Path, name: str, url: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "agent.yaml").write_text(
        f"name: {name}\nversion: 1.0.0\nkind: tool\ntitle: {name}\ndescription: A remote server.\n"
        f"publisher: tests\nserver: {{url: '{url}'}}\n"
    )
    return folder


def _install(kernel: KernelProc, bundle: Path, token: str | None = None) -> subprocess.CompletedProcess[str]:
    return kernel.cli("install", str(bundle), "--yes", "--json", token=token)


def _call(kernel: KernelProc, server: str, tool: str, args: dict, token: str | None = None) -> tuple[int, dict]:
    with kernel.client(token) as c:
        r = c.post(f"/v1/tools/{server}/{tool}", json={"args": args}, timeout=60)
    return r.status_code, r.json()


# -- finding 5: the answer cap ----------------------------------------------------------------


@pytest.fixture(scope="module")
def big_server(kernel: KernelProc, hostile: Hostile, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Installed by the administrator, who may name a loopback address."""
    bundle = _bundle(tmp_path_factory.mktemp("big"), "hostile", f"http://127.0.0.1:{hostile.port}/mcp")
    done = _install(kernel, bundle)
    assert done.returncode == 0, done.stdout + done.stderr
    status, body = _call(kernel, "hostile", "small", {})
    assert status == 200 and body["result"] == "ok", body
    return "hostile"


def _healthz_worst(stop: threading.Event, url: str, worst: list[float]) -> None:
    with httpx.Client(base_url=url, timeout=10) as c:
        while True:  # at least one sample, however quickly the call under test ends
            started = time.monotonic()
            c.get("/healthz")
            worst.append(time.monotonic() - started)
            if stop.is_set():
                return
            time.sleep(0.05)


@pytest.mark.parametrize("mode", ["length", "chunked", "sse"])
def test_an_answer_past_the_cap_is_refused(kernel: KernelProc, big_server: str, mode: str) -> None:
    stop, times = threading.Event(), []
    watcher = threading.Thread(target=_healthz_worst, args=(stop, kernel.url, times))
    watcher.start()
    started = time.monotonic()
    try:
        status, body = _call(kernel, big_server, "big", {"mode": mode})
    finally:
        stop.set()
        watcher.join()
    took = time.monotonic() - started
    assert status >= 400, body
    error = body["error"]
    if mode == "sse":
        # The mcp client itself refuses an event over 1 MiB, before the kernel's 8 MiB cap.
        assert "exceeded the 1048576 byte limit" in error["message"] or "larger than" in error["message"], error
    else:
        assert error["code"] == "payload_too_large", error
        assert "larger than 8388608 bytes" in error["message"]
    assert "\n" not in error["message"]
    # `length` stalls after 1 MiB: refused from the header, not after a 20 s wait.
    assert took < 15, took
    # The kernel kept serving while it read the answer: a loop frozen on this read would hold
    # /healthz for the server's whole 20 s stall. The bound is loose on purpose (a busy shared
    # machine answers /healthz in over a second now and then); it trips only on a freeze.
    assert times and max(times) < 8.0, max(times)
    # The server is usable again on the next call.
    status, body = _call(kernel, big_server, "small", {})
    assert status == 200 and body["result"] == "ok", body


# -- finding 6: no connection before approval, the fetch address policy -----------------------

SPELLINGS = [
    "http://127.0.0.1:{port}/mcp",
    "http://2130706433:{port}/mcp",  # decimal
    "http://0x7f.1:{port}/mcp",  # hex, short form
    "http://127.1:{port}/mcp",
    "http://0177.0.0.1:{port}/mcp",  # octal
    "http://localhost:{port}/mcp",
    "http://[::1]:{port}/mcp",
    "http://[::ffff:127.0.0.1]:{port}/mcp",  # IPv4-mapped IPv6
    "http://[::ffff:7f00:1]:{port}/mcp",
]


@pytest.mark.parametrize("n", range(len(SPELLINGS)))
def test_an_ordinary_users_loopback_server_is_never_contacted(
    kernel: KernelProc, alice: str, hostile: Hostile, tmp_path: Path, n: int
) -> None:
    url = SPELLINGS[n].format(port=hostile.port)
    before = len(hostile.requests())
    name = f"probe{n}"
    bundle = _bundle(tmp_path, name, url)
    # Reviewed only (no --yes): nothing is sent, and the review reflects nothing of the service.
    with kernel.client(alice) as c:
        staged = c.post("/v1/bundles", content=pack(bundle), headers={"content-type": "application/octet-stream"})
    assert staged.status_code == 201, staged.text
    assert "listed when it is first used" in staged.text
    assert len(hostile.requests()) == before
    # Approved: the first use is refused by the address policy, still before any request.
    done = _install(kernel, bundle, alice)
    assert done.returncode == 0, done.stdout
    status, body = _call(kernel, name, "small", {}, alice)
    assert status >= 400
    error = body["error"]
    assert error["code"] == "permission_denied", error
    assert "administrator" in error["message"] and "\n" not in error["message"]
    assert len(hostile.requests()) == before


def test_headers_a_user_sets_are_checked_like_fetch_headers(kernel: KernelProc, alice: str, hostile: Hostile, tmp_path: Path) -> None:
    bundle = _bundle(tmp_path, "headed", f"http://127.0.0.1:{hostile.port}/mcp")
    assert _install(kernel, bundle, alice).returncode == 0
    with kernel.client(alice) as c:
        for headers in ({"Host": "internal.example"}, {"Content-Length": "5"}, {"Transfer-Encoding": "chunked"},
                        {"X-Ok": "a\x01b"}, {"Bad Name": "x"}):
            r = c.put("/v1/tools/headed/headers", json={"headers": headers})
            assert r.status_code >= 400, (headers, r.text)
            assert r.json()["error"]["code"] == "invalid_argument"
        ok = c.put("/v1/tools/headed/headers", json={"headers": {"Authorization": "Bearer t"}})
        assert ok.status_code == 200, ok.text
