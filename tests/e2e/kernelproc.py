"""A real kernel (uvicorn in its own process, bwrap sandboxes) and the real CLI.

A module of its own (not conftest) so tests and bench/ can import it by a unique name."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

DREAMER = str(Path(sys.executable).with_name("dreamer"))

# Every httpx.Client makes a TLS context of its own and loads the system's certificates into it: 40 ms of
# CPU on these machines, for kernels that answer plain HTTP. A wait polling /healthz every 0.1 s with
# `httpx.get` (a client per request) spent a third of a core on it for as long as a kernel took to start,
# and every `KernelProc.client()` paid it again. One context per test process, made once, serves them all.
TLS = ssl.create_default_context()


def http_client(**options: object) -> httpx.Client:
    """An httpx.Client on the process's one TLS context (tests/e2e/kernelproc.py: TLS)."""
    return httpx.Client(verify=TLS, **options)  # type: ignore[arg-type]


def run_cli(args: list[str], env: dict[str, str], input: str | None = None, timeout: float = 120,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`dreamer ARGS` as subprocess.run(..., capture_output=True, text=True) would run it, forked from this test
    process's CLI fork server (cli_forkserver.py: the CLI's imports were most of each call's CPU);
    DREAMER_TEST_CLI=subprocess starts the `dreamer` script each time instead."""
    if os.environ.get("DREAMER_TEST_CLI") == "subprocess":
        return subprocess.run([DREAMER, *args], env=env, capture_output=True, text=True, input=input,
                              timeout=timeout, cwd=cwd)
    with tempfile.TemporaryDirectory(prefix="dreamer-cli-") as scratch:
        streams = {name: Path(scratch) / name for name in ("stdin", "stdout", "stderr")}
        streams["stdin"].write_text(input or "")
        streams["stdout"].touch()
        streams["stderr"].touch()
        request = {"args": args, "env": env, "cwd": str(cwd or Path.cwd()), **{k: str(v) for k, v in streams.items()}}
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(_cli_server())
            conn.sendall(json.dumps(request).encode() + b"\n")
            answers = conn.makefile("rb")
            pid = json.loads(answers.readline())["pid"]
            conn.settimeout(timeout)
            try:
                ended = answers.readline()
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired([DREAMER, *args], timeout) from None
        if not ended:
            raise RuntimeError("the CLI fork server went away (cli_forkserver.py)")
        return subprocess.CompletedProcess(
            [DREAMER, *args], json.loads(ended)["returncode"],
            streams["stdout"].read_text(encoding="utf-8"), streams["stderr"].read_text(encoding="utf-8"),
        )


_CLI_SERVER: tuple[subprocess.Popen[bytes], str] | None = None
_CLI_SERVER_LOCK = threading.Lock()


def _cli_server() -> str:
    """The socket of this process's CLI fork server, started on first use; it ends with this process
    (its stdin closes)."""
    global _CLI_SERVER
    with _CLI_SERVER_LOCK:
        if _CLI_SERVER is None or _CLI_SERVER[0].poll() is not None:
            path = os.path.join(tempfile.mkdtemp(prefix="dreamer-cli-server-"), "socket")
            env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMER_")}
            server = subprocess.Popen([sys.executable, str(Path(__file__).with_name("cli_forkserver.py")), path],
                                      env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert server.stdout is not None
            if server.stdout.readline() != b"ready\n":
                raise RuntimeError(f"the CLI fork server did not start (exit status {server.wait()})")
            _CLI_SERVER = (server, path)
            atexit.register(_stop_cli_server, server, path)
        return _CLI_SERVER[1]


def _stop_cli_server(server: subprocess.Popen[bytes], path: str) -> None:
    # Waited for, so that its CPU (and its children's) counts in this process's, as a `dreamer` process's did.
    if server.stdin is not None:
        server.stdin.close()
    try:
        server.wait(10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class KernelProc:
    home: Path
    port: int
    process: subprocess.Popen[bytes]
    env: dict[str, str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return json.loads((self.home / "credentials").read_text())["token"]

    def client(self, token: str | None = None) -> httpx.Client:
        return http_client(base_url=self.url, headers={"Authorization": f"Bearer {token or self.token}"}, timeout=60)

    def cli(self, *args: str, token: str | None = None, input: str | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(self.env)
        # rich wraps tables to the terminal; without one its width depends on how pytest
        # runs (serially or under xdist), so fix it for output the tests read.
        env["COLUMNS"] = "200"
        if token:
            env["DREAMER_TOKEN"] = token
        return run_cli(list(args), env, input=input, timeout=120, cwd=cwd)

    def cli_json(self, *args: str, token: str | None = None, cwd: Path | None = None) -> object:
        done = self.cli(*args, "--json", token=token, cwd=cwd)
        assert done.returncode == 0, done.stderr + done.stdout
        return json.loads(done.stdout)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_kernel(
    home: Path, extra_env: dict[str, str] | None = None, port: int | None = None, wait_s: float = 180,
    wrapper: list[str] | None = None,
) -> KernelProc:
    """A kernel process on `port`; `wrapper` goes before its command (e.g. prlimit).

    A first start installs the starter agents: minutes on a machine shared by many test runs.
    A free port can be taken by another test run's process between `free_port()` and the
    kernel's bind; then the kernel exits with "address already in use" and, when the caller
    named no port, it is started again on another one."""
    for attempt in range(3):
        kernel = _start_once(home, extra_env, port or free_port(), wait_s, wrapper)
        if kernel is not None:
            return kernel
        if port is not None or attempt == 2:
            break
    raise RuntimeError("kernel exited at start:\n" + (home / "test-kernel.log").read_text()[-3000:])


def _start_once(
    home: Path, extra_env: dict[str, str] | None, port: int, wait_s: float, wrapper: list[str] | None,
) -> KernelProc | None:
    """The started kernel, or None when it lost its port to another process."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("DREAMER_")
    } | {"DREAMER_HOME": str(home), "DREAMER_URL": f"http://127.0.0.1:{port}", "DREAMER_LOG_LEVEL": "warning",
         # Sidekick's planning process starts with a test kernel's first message, not with the kernel: most
         # never chat, and the warm-up was a sixth of a kernel's start (docs/PERFORMANCE.md, seventh session).
         # tests/e2e/test_planner_processes.py starts kernels both ways; a module may ask for "1".
         "DREAMER_SIDEKICK_WARM": "0"}
    # A test run may choose the sandbox of every kernel that does not choose its own
    # (DREAMER_TEST_SANDBOX=forkserver runs the suites on the fork server backend).
    if os.environ.get("DREAMER_TEST_SANDBOX"):
        env["DREAMER_SANDBOX"] = os.environ["DREAMER_TEST_SANDBOX"]
    env |= extra_env or {}
    home.mkdir(parents=True, exist_ok=True)
    log_path = home / "test-kernel.log"
    log_start = log_path.stat().st_size if log_path.exists() else 0
    log = open(log_path, "ab")
    process = subprocess.Popen(
        [*(wrapper or []), sys.executable, "-m", "dreamer.host.server", "127.0.0.1", str(port)],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    kernel = KernelProc(home, port, process, env)
    with http_client(timeout=1) as probe:
        if _wait_until_up(kernel, probe, wait_s, log_path, log_start):
            return kernel
        return None


def _wait_until_up(kernel: KernelProc, probe: httpx.Client, wait_s: float, log_path: Path, log_start: int) -> bool:
    """True once the kernel answers as ours, False when it lost its port to another process."""
    process = kernel.process
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            with open(log_path, "rb") as f:
                f.seek(log_start)
                said = f.read().decode(errors="replace")
            if "address already in use" in said:
                return False
            raise RuntimeError("kernel exited at start:\n" + said[-3000:])
        try:
            if probe.get(f"{kernel.url}/healthz").status_code == 200 and _answers_as_ours(kernel, probe):
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    kernel.stop()
    raise RuntimeError(f"kernel did not answer /healthz within {wait_s:g} s")


def _answers_as_ours(kernel: KernelProc, probe: httpx.Client) -> bool:
    """False when another process answers on our port: it refuses the token our kernel wrote.

    Every kernel writes (or keeps) its credentials during start-up, before uvicorn binds its
    port. So with none readable yet whatever answers /healthz is not ours yet: another test's
    kernel that took the port we picked, which our kernel will find taken when it binds."""
    if kernel.process.poll() is not None:
        return False
    try:
        token = kernel.token
    except (OSError, ValueError, KeyError):
        return False
    return probe.get(f"{kernel.url}/v1/me", headers={"Authorization": f"Bearer {token}"}, timeout=5).status_code != 401


def write_bundle(root: Path, name: str, code: str, *, required: list[str] | None = None,
                 optional: list[str] | None = None, version: str = "0.1.0") -> Path:
    """A small agent bundle for tests: agent.yaml and <module>/server.py holding `code`."""
    module = name.replace("-", "_")
    folder = root / name
    (folder / module).mkdir(parents=True, exist_ok=True)
    (folder / module / "__init__.py").write_text("")
    (folder / module / "server.py").write_text(code)
    (folder / "agent.yaml").write_text(
        "\n".join(
            [
                f"name: {name}", f"version: {version}", "kind: agent", f"title: {name.title()}",
                "description: A test agent.", "publisher: tests", f"entry: {module}.server",
                "permissions:", f"  required: {json.dumps(required or [])}", f"  optional: {json.dumps(optional or [])}",
            ]
        )
        + "\n"
    )
    return folder


def start_gallery(root: Path, wait_s: float = 30) -> tuple[subprocess.Popen[bytes], str]:
    """`dreamer gallery serve` on a free port with its home in root/gallery; returns (process, URL).
    The caller terminates the process."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMER_")}
    log = open(root / "gallery.log", "ab")
    gallery = subprocess.Popen(
        [DREAMER, "gallery", "serve", "--port", str(port), "--home", str(root / "gallery")],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    deadline = time.monotonic() + wait_s
    with http_client(timeout=1) as probe:
        while True:
            if gallery.poll() is not None:
                raise RuntimeError("the gallery exited at start:\n" + (root / "gallery.log").read_text()[-3000:])
            try:
                if probe.get(url + "/healthz").status_code == 200:
                    return gallery, url
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                gallery.terminate()
                raise RuntimeError(f"the gallery did not answer /healthz within {wait_s:g} s")
            time.sleep(0.1)


@contextmanager
def gallery_and_kernel(root: Path) -> Iterator[tuple[KernelProc, str]]:
    """A gallery (start_gallery) and a kernel pointed at it, with its CLI config in root/config;
    yields (kernel, gallery URL) and stops both."""
    gallery, url = start_gallery(root)
    try:
        kernel = start_kernel(root / "home", {"DREAMER_GALLERIES": url, "DREAMER_CONFIG_DIR": str(root / "config")})
        try:
            yield kernel, url
        finally:
            kernel.stop()
    finally:
        gallery.terminate()
        gallery.wait(20)
