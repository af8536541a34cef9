"""Where the kernel is and who we are: DREAMER_URL, DREAMER_TOKEN, $DREAMER_HOME/credentials.

The CLI reads the environment itself instead of importing the kernel's settings,
because it is a client: it must work against a kernel on another machine, with
none of the kernel's dependencies configured.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_URL = "http://127.0.0.1:8700"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8700

_KEY_LINE = re.compile(r"(?P<key>token|url|user)\s*[=:]\s*(?P<value>.*)", re.IGNORECASE)


@dataclass(frozen=True)
class Credentials:
    token: str | None = None
    url: str | None = None
    user: str | None = None


@dataclass(frozen=True)
class CLIConfig:
    url: str
    token: str | None
    home: Path
    credentials_path: Path

    @property
    def pid_path(self) -> Path:
        return self.home / "kernel.pid"

    @property
    def log_path(self) -> Path:
        return self.home / "kernel.log"


def dreamer_home() -> Path:
    return Path(os.environ.get("DREAMER_HOME") or Path.home() / ".dreamer").expanduser()


def parse_credentials(text: str) -> Credentials:
    """Read the credentials file: JSON {"url", "user", "token"}, `token = ...` lines, or a bare token.

    Tolerant on purpose: people edit this file by hand, and a token pasted on its
    own line is the most likely hand edit.
    """
    stripped = text.strip()
    if not stripped:
        return Credentials()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError:
            return Credentials()
        if not isinstance(data, dict):
            return Credentials()
        return Credentials(token=_text(data.get("token")), url=_text(data.get("url")), user=_text(data.get("user")))
    values: dict[str, str] = {}
    bare: str | None = None
    for line in stripped.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _KEY_LINE.fullmatch(line)
        if match:
            values[match["key"].lower()] = match["value"].strip().strip("'\"")
        elif bare is None and " " not in line and "://" not in line:
            bare = line
    return Credentials(token=values.get("token") or bare, url=values.get("url"), user=values.get("user"))


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def read_credentials(path: Path) -> Credentials:
    try:
        return parse_credentials(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        # Missing or unreadable: carry on without a token; the kernel will say 401.
        return Credentials()


def load_config() -> CLIConfig:
    """The environment wins over the credentials file, which wins over the defaults."""
    home = dreamer_home()
    path = home / "credentials"
    creds = read_credentials(path)
    url = os.environ.get("DREAMER_URL") or creds.url or DEFAULT_URL
    token = os.environ.get("DREAMER_TOKEN") or creds.token
    return CLIConfig(url=url.rstrip("/"), token=token, home=home, credentials_path=path)


def host_port(url: str) -> tuple[str, int]:
    """The host and port `dreamer up` should bind by default: those of DREAMER_URL when it is local-looking."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or DEFAULT_HOST
        port = parts.port or DEFAULT_PORT
    except ValueError:
        return DEFAULT_HOST, DEFAULT_PORT
    return host, port
