"""Installation settings, read once from the environment.

Everything the kernel writes lives under DREAMER_HOME; nothing else on the host
is touched, which is what makes an installation easy to back up or throw away.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8700


# The limits an agent may set for itself in agent.yaml (`limits:`), each named after
# its DREAMER_LIMIT_* variable, mapped to the Limits field it sets.
AGENT_LIMITS: dict[str, str] = {
    "memory_mb": "address_space_mb",
    "cpu_seconds": "cpu_seconds",
    "file_mb": "file_size_mb",
    "open_files": "open_files",
    "processes": "processes",
    "call_timeout_s": "call_timeout_s",
    "background_timeout_s": "background_timeout_s",
}

# Installation ceilings from the environment: variable -> (Limits field, type).
LIMIT_VARIABLES: dict[str, tuple[str, type[int] | type[float]]] = {
    "DREAMER_LIMIT_MEMORY_MB": ("address_space_mb", int),
    "DREAMER_LIMIT_CPU_SECONDS": ("cpu_seconds", int),
    "DREAMER_LIMIT_FILE_MB": ("file_size_mb", int),
    "DREAMER_LIMIT_OPEN_FILES": ("open_files", int),
    "DREAMER_LIMIT_PROCESSES": ("processes", int),
    "DREAMER_CALL_TIMEOUT": ("call_timeout_s", float),
    "DREAMER_BACKGROUND_TIMEOUT": ("background_timeout_s", float),
}


@dataclass(frozen=True)
class Limits:
    """Per-worker resource ceilings.

    The installation's Limits (from DREAMER_LIMIT_*) are both the default and the
    ceiling: an agent may ask for other values in agent.yaml and gets each one
    capped at the installation's (`within`).
    """

    address_space_mb: int = 2048
    cpu_seconds: int = 120
    file_size_mb: int = 256
    open_files: int = 256
    # Processes and threads of one worker together, the sandbox's own included.
    processes: int = 128
    call_timeout_s: float = 30.0
    # One attempt of a background invocation: nobody waits on it, so it may run longer.
    background_timeout_s: float = 900.0
    max_message_bytes: int = 8 * 1024 * 1024
    max_log_bytes: int = 1024 * 1024

    def within(self, asked: Mapping[str, object] | None) -> Limits:
        """These limits with an agent's `limits:` block applied, never above them."""
        if not asked:
            return self
        changes: dict[str, Any] = {}
        for name, value in asked.items():
            target = AGENT_LIMITS.get(name)
            # The manifest was validated at install; anything else here is ignored, not trusted.
            if target is None or isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                continue
            ceiling = getattr(self, target)
            changes[target] = type(ceiling)(min(value, ceiling))
        return replace(self, **changes)


# Per-user quotas from the environment: variable -> Quotas field. One user's account may
# use at most this much of the installation, whatever their agents do (issue 14, finding 5).
QUOTA_VARIABLES: dict[str, str] = {
    "DREAMER_QUOTA_QUEUED": "queued",
    "DREAMER_QUOTA_STAGING_MB": "staging_mb",
    "DREAMER_QUOTA_DATA_MB": "data_mb",
    "DREAMER_QUOTA_FEED_POSTS": "feed_posts",
    "DREAMER_QUOTA_WORKERS": "workers",
    "DREAMER_QUOTA_MEMORY_MB": "memory_mb",
}


@dataclass(frozen=True)
class Quotas:
    """What one user may hold at once. Checked by kernel/users/quotas.py, the one place
    that measures use and words the refusal."""

    queued: int = 2000  # background invocations waiting, all agents together
    staging_mb: int = 512  # uploaded bundles unpacked and waiting for approval
    data_mb: int = 2048  # every agent's and tool's /data folder together, on disk
    feed_posts: int = 10_000  # posts kept in the feed
    workers: int = 12  # sandboxes alive at once: warm workers, builds and tests
    memory_mb: int = 16_384  # the memory ceilings of those sandboxes added up


@dataclass(frozen=True)
class Settings:
    home: Path
    database_url: str
    sandbox: str
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    limits: Limits = field(default_factory=Limits)
    quotas: Quotas = field(default_factory=Quotas)
    workers_total: int = 64  # sandboxes alive at once on the whole installation (DREAMER_WORKERS_TOTAL)
    background_total: int = 32  # background invocations running at once, all users (DREAMER_BACKGROUND_TOTAL)
    warm_seconds: float = 300.0
    max_workers_per_agent: int = 4
    max_call_depth: int = 8
    max_bundle_bytes: int = 50 * 1024 * 1024
    max_bundle_files: int = 2000
    otlp_endpoint: str | None = None
    fetch_timeout_s: float = 60.0  # ceiling for one ctx.fetch, redirects included
    fetch_max_bytes: int = 10 * 1024 * 1024  # ceiling (and default) for one response body
    background_per_user: int = 4  # background invocations of one user running at once
    background_per_agent: int = 2  # ... and of one of their agents
    max_queued_per_agent: int = 1000  # background invocations of one (user, agent) waiting at once
    webhook_max_bytes: int = 256 * 1024  # the largest body a webhook accepts
    retry_delay_s: float = 1.0  # before a background invocation's 2nd attempt; doubles for each further one
    galleries: tuple[str, ...] = ()  # DREAMER_GALLERIES: gallery URLs, searched in this order
    # HTTP connections (kernel/connguard.py): a request's headers must arrive within
    # header_timeout_s; a body may stall body_timeout_s; an idle keep-alive connection
    # closes after keepalive_timeout_s; max_connections 0 means half the descriptor limit.
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    keepalive_timeout_s: float = 5.0
    max_connections: int = 0
    # The web app's automatic sign-in on localhost (web/auth.py): "owner" (only the OS
    # account that started the kernel), "off", or "any" local process (DREAMER_LOCAL_SIGNIN).
    local_signin: str = "owner"
    tool_call_timeout_s: float = 30.0  # one tool call (DREAMER_TOOL_TIMEOUT)
    # DREAMER_FS_ROOTS: the folders each user may grant agents, `PATH` (every user; {user}
    # is their name) or `USER=PATH` (one user), separated by spaces or commas.
    fs_roots: tuple[str, ...] = ("/home/{user}",)
    tool_connect_timeout_s: float = 20.0  # starting a tool server and listing its tools (DREAMER_TOOL_CONNECT_TIMEOUT)
    # One node of an installation that runs several kernels on one PostgreSQL database
    # (kernel/cluster/): its name (DREAMER_NODE, `dreamer up --node`), the URL other nodes
    # and the load balancer reach it at (DREAMER_ADVERTISE), and how long its heartbeat
    # holds its lease (DREAMER_NODE_LEASE): past that, its running work is taken over.
    node: str | None = None
    advertise: str | None = None
    node_lease_s: float = 10.0

    @property
    def bundles_dir(self) -> Path:
        return self.home / "bundles"

    @property
    def users_dir(self) -> Path:
        return self.home / "users"

    @property
    def staging_dir(self) -> Path:
        return self.home / "staging"

    @property
    def credentials_path(self) -> Path:
        return self.home / "credentials"

    @property
    def pid_path(self) -> Path:
        # Several nodes may share one DREAMER_HOME (the shared data folder): one pid file each.
        return self.home / (f"kernel-{self.node}.pid" if self.node else "kernel.pid")

    def agent_data_dir(self, user: str, agent: str) -> Path:
        return self.users_dir / user / "agents" / agent / "data"

    @property
    def tool_bundles_dir(self) -> Path:
        return self.home / "tool-bundles"

    def tool_data_dir(self, user: str, server: str) -> Path:
        return self.users_dir / user / "tools" / server / "data"


def dreamer_home() -> Path:
    return Path(os.environ.get("DREAMER_HOME") or Path.home() / ".dreamer").expanduser().resolve()


def _number(name: str, kind: type[int] | type[float]) -> Any:
    raw = os.environ[name]
    try:
        value = kind(raw.strip())
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise SystemExit(f"dreamer: {name}={raw!r} is not {what}") from None
    if not value > 0 or value == float("inf"):
        raise SystemExit(f"dreamer: {name} must be a finite number greater than zero, not {raw!r}")
    return value


def _limits() -> Limits:
    """The installation's ceilings: the defaults, each replaced by its variable when set."""
    values = {attr: _number(name, kind) for name, (attr, kind) in LIMIT_VARIABLES.items() if os.environ.get(name)}
    return Limits(**values)


def load_settings(**overrides: object) -> Settings:
    home = dreamer_home()
    url = os.environ.get("DREAMER_DATABASE_URL") or f"sqlite:///{home / 'kernel.db'}"
    values: dict[str, object] = {
        "home": home,
        "database_url": url,
        "sandbox": os.environ.get("DREAMER_SANDBOX", "auto"),
        "otlp_endpoint": os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None,
    }
    values["limits"] = _limits()
    values["quotas"] = Quotas(**{attr: _number(name, int) for name, attr in QUOTA_VARIABLES.items() if os.environ.get(name)})
    values["galleries"] = tuple(u.rstrip("/") for u in os.environ.get("DREAMER_GALLERIES", "").replace(",", " ").split())
    if os.environ.get("DREAMER_FS_ROOTS") is not None:
        values["fs_roots"] = tuple(os.environ["DREAMER_FS_ROOTS"].replace(",", " ").split())
    if os.environ.get("DREAMER_MAX_CALL_DEPTH"):
        values["max_call_depth"] = _number("DREAMER_MAX_CALL_DEPTH", int)
    for name, attr, kind in (
        ("DREAMER_BACKGROUND_PER_USER", "background_per_user", int),
        ("DREAMER_BACKGROUND_PER_AGENT", "background_per_agent", int),
        ("DREAMER_RETRY_DELAY", "retry_delay_s", float),
        ("DREAMER_WEBHOOK_MAX_BYTES", "webhook_max_bytes", int),
        ("DREAMER_MAX_QUEUED_PER_AGENT", "max_queued_per_agent", int),
        ("DREAMER_WORKERS_TOTAL", "workers_total", int),
        ("DREAMER_HEADER_TIMEOUT", "header_timeout_s", float),
        ("DREAMER_BODY_TIMEOUT", "body_timeout_s", float),
        ("DREAMER_KEEPALIVE_TIMEOUT", "keepalive_timeout_s", float),
        ("DREAMER_MAX_CONNECTIONS", "max_connections", int),
        ("DREAMER_BACKGROUND_TOTAL", "background_total", int),
    ):
        if os.environ.get(name):
            values[attr] = _number(name, kind)
    if os.environ.get("DREAMER_LOCAL_SIGNIN"):
        mode = os.environ["DREAMER_LOCAL_SIGNIN"].strip().lower()
        if mode not in ("owner", "off", "any"):
            raise SystemExit(f"dreamer: DREAMER_LOCAL_SIGNIN is owner, off or any, not {mode!r}")
        values["local_signin"] = mode
    if os.environ.get("DREAMER_WARM_SECONDS"):
        values["warm_seconds"] = _number("DREAMER_WARM_SECONDS", float)
    if os.environ.get("DREAMER_TOOL_TIMEOUT"):
        values["tool_call_timeout_s"] = _number("DREAMER_TOOL_TIMEOUT", float)
    if os.environ.get("DREAMER_TOOL_CONNECT_TIMEOUT"):
        values["tool_connect_timeout_s"] = _number("DREAMER_TOOL_CONNECT_TIMEOUT", float)
    if os.environ.get("DREAMER_NODE_LEASE"):
        values["node_lease_s"] = _number("DREAMER_NODE_LEASE", float)
    values.update(overrides)
    node = values.get("node") or os.environ.get("DREAMER_NODE") or None
    if node is not None:
        values["node"], values["advertise"] = _node_settings(str(node), values, url)
    return Settings(**values)  # type: ignore[arg-type]


NODE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


def _node_settings(node: str, values: dict[str, object], url: str) -> tuple[str, str]:
    """The node's name and advertised URL, or a one-sentence refusal."""
    if not NODE_NAME.fullmatch(node):
        raise SystemExit(f"dreamer: a node name is 1-63 lower-case letters, digits and dashes, not {node[:64]!r}")
    if not url.startswith(("postgresql", "postgres")):
        raise SystemExit(
            "dreamer: a node of a multi-node installation needs PostgreSQL; set DREAMER_DATABASE_URL=postgresql://... "
            "(SQLite serves one kernel only)"
        )
    advertise = str(values.get("advertise") or os.environ.get("DREAMER_ADVERTISE") or "")
    if not advertise:
        host, port = values.get("host", DEFAULT_HOST), values.get("port", DEFAULT_PORT)
        advertise = f"http://{host}:{port}"
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", advertise) or len(advertise) > 300:
        raise SystemExit(f"dreamer: --advertise is the node's URL, like http://10.0.0.5:8700, not {advertise[:100]!r}")
    lease = values.get("node_lease_s", 10.0)
    if not isinstance(lease, (int, float)) or not 2 <= lease <= 600:
        raise SystemExit("dreamer: DREAMER_NODE_LEASE is a number of seconds from 2 to 600")
    return node, advertise.rstrip("/")
