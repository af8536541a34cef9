"""Semantic version order, shared by the gallery (latest offered) and the kernel (outdated)."""

from __future__ import annotations

import re

_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


def semver_key(version: str) -> tuple[object, ...]:
    """Order versions as semver does: release numbers, then a pre-release sorts before its release."""
    match = _SEMVER.match(version)
    if not match:
        return (-1, -1, -1, 0, ())
    major, minor, patch, pre = match.groups()
    if pre is None:
        return (int(major), int(minor), int(patch), 1, ())
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (int(major), int(minor), int(patch), 0, parts)
