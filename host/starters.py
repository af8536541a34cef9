"""The starter catalogue: the built-in tool bundles, then the starter agents (agents/)."""

from __future__ import annotations

from pathlib import Path

from dreamer.agents.bundles import starter_bundles, starter_tools


class AgentStarters:
    def folders(self) -> list[Path]:
        return [*starter_tools(), *starter_bundles()]

    def tool_folders(self) -> list[Path]:
        return starter_tools()
