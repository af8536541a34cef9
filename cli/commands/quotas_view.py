"""How quotas are printed: `dreamer users show` and `dreamer doctor` share one table."""

from __future__ import annotations

from typing import Any

from dreamer.cli.output import cell_text

# Column order and headings; the keys are the kernel's quota names (kernel/users/quotas.py).
COLUMNS = (
    ("queued", "queued"),
    ("staging_mb", "staging MB"),
    ("data_mb", "data MB"),
    ("feed_posts", "feed posts"),
    ("workers", "sandboxes"),
    ("memory_mb", "memory MB"),
)


def used_of(used: dict[str, Any], quotas: dict[str, Any]) -> list[str]:
    """One row: "used / quota" per quota."""
    return [f"{cell_text(used.get(key))} / {cell_text(quotas.get(key))}" for key, _ in COLUMNS]


def headings() -> list[str]:
    return [title for _, title in COLUMNS]
