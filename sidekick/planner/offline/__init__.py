"""The offline planner: an intent engine over functions' examples (no model needed)."""

from dreamer.sidekick.planner.offline.engine import OfflinePlanner

__all__ = ["OfflinePlanner"]
