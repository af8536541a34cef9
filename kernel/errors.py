"""The kernel's error type; it lives in dreamer.contracts.errors, shared with the CLI and the gallery.

Kept as a re-export: 130-odd modules import it from here, and other branches of this
session add more. Importers may move to dreamer.contracts.errors over time.
"""

from dreamer.contracts.errors import STATUS, DreamerError

__all__ = ["STATUS", "DreamerError"]
