"""Three kernel nodes on one PostgreSQL database behind HAProxy, all on loopback.

A module of its own (not conftest) so the cluster test and bench/bench_cluster.py share it.
Every node runs the real `dreamer up --node NAME --advertise URL` in its own process
group (so a test can SIGKILL one with everything it started); they share one
DREAMER_HOME, the shared data folder of a deployment.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from kernelproc import http_client, run_cli  # one TLS context per process: a client of its own costs 40 ms of CPU

DREAMER = str(Path(sys.executable).with_name("dreamer"))
PG_ADMIN_URL = os.environ.get("DREAMER_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def haproxy_binary() -> str | None:
    return shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)


@contextmanager
def fresh_database() -> Iterator[str]:
    """A PostgreSQL database of its own (dropped after); raises LookupError when no server answers."""
    import psycopg
    from sqlalchemy.engine import make_url

    try:
        conn = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        raise LookupError(f"PostgreSQL does not answer at {PG_ADMIN_URL}: {exc}") from None
    name = f"dreamer_cluster_{secrets.token_hex(4)}"
    with conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def wait_until(what: str, check: object, timeout: float = 120.0, every: float = 0.2) -> object:
    """Poll `check()` until it returns something truthy; fail naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()  # type: ignore[operator]
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def _answers(url: str) -> bool:
    try:
        with http_client(timeout=1) as probe:
            return probe.get(f"{url}/healthz").status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class Node:
    name: str
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the node's whole process group: the kernel and every sandbox it started."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)


@dataclass
class Cluster:
    root: Path
    database_url: str
    nodes: list[Node]
    lease_s: float
    lb_port: int = 0
    haproxy: subprocess.Popen[bytes] | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.lb_port}"

    @property
    def admin_token(self) -> str:
        return str(json.loads((self.home / "credentials").read_text())["token"])

    def client(self, token: str | None = None, url: str | None = None) -> httpx.Client:
        return http_client(base_url=url or self.url, headers={"Authorization": f"Bearer {token or self.admin_token}"},
                           timeout=60)

    def cli(self, *args: str, token: str | None = None, url: str | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(self.env) | {"DREAMER_URL": url or self.url, "DREAMER_TOKEN": token or self.admin_token, "COLUMNS": "200"}
        return run_cli(list(args), env, timeout=180)  # forked from the test process's CLI server (kernelproc.run_cli)

    def cli_json(self, *args: str, token: str | None = None, url: str | None = None) -> object:
        done = self.cli(*args, "--json", token=token, url=url)
        assert done.returncode == 0, done.stderr + done.stdout
        return json.loads(done.stdout)

    def start_node(self, node: Node) -> None:
        log = open(self.root / f"node-{node.name}.log", "ab")
        node.process = subprocess.Popen(
            [DREAMER, "up", "--node", node.name, "--host", "127.0.0.1", "--port", str(node.port),
             "--advertise", node.url],
            env=self.env | {"DREAMER_URL": node.url}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def wait_node(self, node: Node, timeout: float = 300.0) -> None:
        def up() -> bool:
            if node.process is not None and node.process.poll() is not None:
                raise RuntimeError(f"node {node.name} exited at start:\n" + self.log_tail(node))
            return _answers(node.url)

        wait_until(f"node {node.name} to answer", up, timeout)

    def log_tail(self, node: Node, chars: int = 3000) -> str:
        path = self.root / f"node-{node.name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def start_haproxy(self) -> None:
        binary = haproxy_binary()
        assert binary is not None
        self.lb_port = free_port()
        servers = "\n".join(
            f"    server {n.name} 127.0.0.1:{n.port} check inter 500ms fall 2 rise 2" for n in self.nodes
        )
        config = self.root / "haproxy.cfg"
        # Health checks take a dead node out within a second; a request whose connection is
        # refused is retried on another node (redispatch), never one that reached a kernel.
        config.write_text(f"""global
    maxconn 512
defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    retries 3
    option redispatch
    retry-on conn-failure empty-response
frontend dreamer
    bind 127.0.0.1:{self.lb_port}
    default_backend kernels
backend kernels
    balance roundrobin
    option httpchk GET /healthz
{servers}
""")
        log = open(self.root / "haproxy.log", "ab")
        self.haproxy = subprocess.Popen([binary, "-db", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        wait_until("HAProxy to answer", lambda: _answers(self.url), 60)

    def stop(self) -> None:
        for node in self.nodes:
            if node.alive():
                assert node.process is not None
                node.process.send_signal(signal.SIGTERM)
        for node in self.nodes:
            if node.process is not None:
                try:
                    node.process.wait(30)
                except subprocess.TimeoutExpired:
                    node.kill()
        if self.haproxy is not None and self.haproxy.poll() is None:
            self.haproxy.terminate()
            self.haproxy.wait(10)


@contextmanager
def running_cluster(root: Path, count: int = 3, lease_s: float = 6.0, extra_env: dict[str, str] | None = None,
                    haproxy: bool = True) -> Iterator[Cluster]:
    """`count` nodes (the first alone, so it does the first-start steps, then the rest at once)
    and HAProxy in front; everything is stopped and the database dropped afterwards."""
    with fresh_database() as url:
        root.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMER_")} | {
            "DREAMER_HOME": str(root / "home"), "DREAMER_DATABASE_URL": url, "DREAMER_LOG_LEVEL": "warning",
            "DREAMER_NODE_LEASE": str(lease_s),
        } | (extra_env or {})
        cluster = Cluster(root, url, [Node(f"n{i + 1}", free_port()) for i in range(count)], lease_s, env=env)
        try:
            cluster.start_node(cluster.nodes[0])
            cluster.wait_node(cluster.nodes[0])
            for node in cluster.nodes[1:]:
                cluster.start_node(node)
            for node in cluster.nodes[1:]:
                cluster.wait_node(node)
            if haproxy:
                cluster.start_haproxy()
            yield cluster
        finally:
            cluster.stop()
