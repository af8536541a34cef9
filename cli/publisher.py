"""The publisher's own files: the signing key and the gallery logins (both mode 0600).

They belong to the person, not to a kernel installation, so they live under the
user's config folder ($DREAMER_CONFIG_DIR, else $XDG_CONFIG_HOME/dreamer, else
~/.config/dreamer), not under $DREAMER_HOME.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dreamer.cli.client import CLIError

LOGINS_NAME = "galleries.json"
KEY_NAME = "publisher.key"


def config_dir() -> Path:
    explicit = os.environ.get("DREAMER_CONFIG_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "dreamer"


def key_path() -> Path:
    return config_dir() / KEY_NAME


def read_logins() -> dict[str, dict[str, Any]]:
    path = config_dir() / LOGINS_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        raise CLIError("invalid_argument", f"{path} is not readable JSON; fix or delete it and log in again.") from None
    return data if isinstance(data, dict) else {}


def save_login(url: str, publisher: str, token: str) -> Path:
    logins = read_logins()
    logins[url.rstrip("/")] = {"publisher": publisher, "token": token}
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / LOGINS_NAME
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        os.fchmod(out.fileno(), 0o600)
        json.dump(logins, out, indent=2)
    os.replace(tmp, path)
    return path


def login_for(url: str | None) -> tuple[str, dict[str, Any]]:
    """The gallery to publish to: the one named, or the only one logged in to."""
    logins = read_logins()
    if url:
        found = logins.get(url.rstrip("/"))
        if not found:
            raise CLIError("unauthorized", f"you are not logged in to {url}; run `dreamer login {url}` first.")
        return url.rstrip("/"), found
    if not logins:
        raise CLIError("unauthorized", "you are not logged in to any gallery; run `dreamer login GALLERY_URL` first.")
    if len(logins) > 1:
        raise CLIError("invalid_argument", f"you are logged in to several galleries ({', '.join(logins)}); pick one with --gallery URL.")
    url, found = next(iter(logins.items()))
    return url, found
