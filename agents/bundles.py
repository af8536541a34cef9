"""Where the starter bundles live on disk.

Data-location code only: the kernel installs these folders like any other
bundle and never imports the agent code inside them.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

# Install order matters: recipes asks for agent:grocery.add_items, so grocery comes first.
STARTERS: tuple[str, ...] = ("grocery", "recipes")


def starter_bundles() -> list[Path]:
    """The folders of the starter agents, in the order they should be installed."""
    return [HERE / name for name in STARTERS]
