"""Where the starter bundles live on disk.

Data-location code only: the kernel installs these folders like any other
bundle and never imports the agent code inside them.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

# Install order matters: an agent comes after the agents it asks to call. recipes
# asks for agent:grocery.add_items; calendar for agent:notes.search and agent:grocery.list_items.
STARTERS: tuple[str, ...] = ("grocery", "recipes", "notes", "calendar", "sql_explorer", "watch")
# The built-in tool bundles (kind: tool), installed before the agents.
TOOLS: tuple[str, ...] = ("calendar", "files", "web")


def starter_bundles() -> list[Path]:
    """The folders of the starter agents, in the order they should be installed."""
    return [HERE / name for name in STARTERS]


def starter_tools() -> list[Path]:
    """The folders of the built-in tool bundles (agents/tools/NAME)."""
    return [HERE / "tools" / name for name in TOOLS]
