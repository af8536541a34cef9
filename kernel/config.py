"""Installation settings, read once from the environment.

Everything the kernel writes lives under DREAMER_HOME; nothing else on the host
is touched, which is what makes an installation easy to back up or throw away.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8700


@dataclass(frozen=True)
class Limits:
    """Per-worker resource ceilings (issue 3 makes these configurable per agent)."""

    address_space_mb: int = 2048
    cpu_seconds: int = 120
    file_size_mb: int = 256
    open_files: int = 256
    call_timeout_s: float = 30.0
    max_message_bytes: int = 8 * 1024 * 1024
    max_log_bytes: int = 1024 * 1024


@dataclass(frozen=True)
class Settings:
    home: Path
    database_url: str
    sandbox: str
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    limits: Limits = field(default_factory=Limits)
    warm_seconds: float = 300.0
    max_workers_per_agent: int = 4
    max_call_depth: int = 8
    max_bundle_bytes: int = 50 * 1024 * 1024
    max_bundle_files: int = 2000
    otlp_endpoint: str | None = None

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
        return self.home / "kernel.pid"

    def agent_data_dir(self, user: str, agent: str) -> Path:
        return self.users_dir / user / "agents" / agent / "data"


def dreamer_home() -> Path:
    return Path(os.environ.get("DREAMER_HOME") or Path.home() / ".dreamer").expanduser().resolve()


def _number(name: str, kind: type[int] | type[float]) -> Any:
    raw = os.environ[name]
    try:
        value = kind(raw)
    except ValueError:
        raise SystemExit(f"dreamer: {name}={raw!r} is not a number") from None
    if value <= 0:
        raise SystemExit(f"dreamer: {name} must be greater than zero")
    return value


def load_settings(**overrides: object) -> Settings:
    home = dreamer_home()
    url = os.environ.get("DREAMER_DATABASE_URL") or f"sqlite:///{home / 'kernel.db'}"
    values: dict[str, object] = {
        "home": home,
        "database_url": url,
        "sandbox": os.environ.get("DREAMER_SANDBOX", "bwrap"),
        "otlp_endpoint": os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None,
    }
    if os.environ.get("DREAMER_CALL_TIMEOUT"):
        values["limits"] = Limits(call_timeout_s=_number("DREAMER_CALL_TIMEOUT", float))
    if os.environ.get("DREAMER_MAX_CALL_DEPTH"):
        values["max_call_depth"] = _number("DREAMER_MAX_CALL_DEPTH", int)
    if os.environ.get("DREAMER_WARM_SECONDS"):
        values["warm_seconds"] = _number("DREAMER_WARM_SECONDS", float)
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]
