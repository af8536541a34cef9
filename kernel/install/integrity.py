"""Installed code is what was approved: a bundle folder is checked against the digest
recorded when the user approved it, each time a worker starts from it and at rollback.

Bundle folders are content-addressed (bundles/NAME/VERSION-DIGEST), so a mismatch means
the folder was changed behind the kernel's back; nothing runs from it.
"""

from __future__ import annotations

from pathlib import Path

from dreamer.contracts.archive import tree_digest
from dreamer.contracts.errors import DreamerError


def bundle_folder(root: Path, name: str, version: str, digest: str) -> Path:
    """Where the bundle with this content lives: one folder per digest, never reused for other content."""
    return root / name / f"{version}-{digest}"


def check_bundle(path: Path, digest: str, what: str) -> None:
    """Refuse to run `what` from `path` unless its files still have the approved digest."""
    try:
        found = tree_digest(path)
    except (DreamerError, OSError):
        found = None
    if found != digest:
        raise DreamerError(
            "digest_mismatch",
            f"{what} was not started: its installed files no longer match what you approved; "
            f"install it again to put the approved files back",
        )
