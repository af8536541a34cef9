"""Moved to dreamer.contracts.versions; this re-export goes once no branch imports it here."""

from dreamer.contracts.versions import semver_key

__all__ = ["semver_key"]
