"""Whether a set of granted scopes allows a request (kept for its importers; the gate is gate.py)."""

from __future__ import annotations

from dreamer.kernel.permissions.gate import covering as allowed

__all__ = ["allowed"]
