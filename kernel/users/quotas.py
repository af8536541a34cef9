"""Per-user quotas: how much of the installation one account may hold, and the one
way a refusal is worded (issue 14, finding 5).

The limits come from Settings.quotas (DREAMER_QUOTA_*). Each check measures what the
user holds now and raises `quota_exceeded` (HTTP 429) with one sentence naming the
quota, the use, the limit and what to do; nothing has been written when it raises.
"""

from __future__ import annotations

import os
from pathlib import Path

from dreamer.kernel.config import Quotas, Settings
from dreamer.kernel.errors import DreamerError

MB = 1024 * 1024

# What each quota counts, as a person would say it.
LABELS: dict[str, str] = {
    "queued": "background invocations waiting to run",
    "staging_mb": "MB of uploaded bundles waiting for approval",
    "data_mb": "MB of agent data on disk",
    "feed_posts": "posts in the feed",
    "workers": "sandboxes running at once",
    "memory_mb": "MB of sandbox memory at once",
}


def exceeded(quota: str, used: int | float, limit: int, hint: str) -> DreamerError:
    """The refusal of every quota, in one shape."""
    shown = f"{used:.0f}" if isinstance(used, float) else str(used)
    return DreamerError(
        "quota_exceeded",
        f"your account would hold {shown} {LABELS[quota]}, over its quota of {limit}; {hint}",
        quota=quota, used=used, limit=limit,
    )


def disk_bytes(root: Path) -> int:
    """Space a folder takes on disk, counted in allocated blocks: a million one-byte
    files cost what they really cost, and a sparse file only what it has written."""
    total = 0
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += info.st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return total


def data_folders(settings: Settings, user: str) -> list[Path]:
    """Every folder the user's agents and tool servers write: their /data folders."""
    base = settings.users_dir / user
    return [base / "agents", base / "tools"]


def data_bytes(settings: Settings, user: str) -> int:
    return sum(disk_bytes(folder) for folder in data_folders(settings, user))


def usage_view(quotas: Quotas) -> dict[str, int]:
    return {name: getattr(quotas, name) for name in LABELS}


__all__ = ["LABELS", "MB", "exceeded", "disk_bytes", "data_folders", "data_bytes", "usage_view"]
