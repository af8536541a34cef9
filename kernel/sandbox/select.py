"""Choosing a backend by name (DREAMER_SANDBOX): `bwrap` by default, `none` only on request."""

from __future__ import annotations

import shutil

from dreamer.kernel.errors import DreamerError
from dreamer.kernel.sandbox.base import Sandbox
from dreamer.kernel.sandbox.bwrap import BwrapSandbox
from dreamer.kernel.sandbox.unconfined import UnconfinedSandbox

NAMES = ("bwrap", "none")

BWRAP_MISSING = (
    "bubblewrap (bwrap) is not installed; install the Debian package bubblewrap, "
    "or set DREAMER_SANDBOX=none to run agents unconfined (unsafe)"
)


def get_sandbox(name: str) -> Sandbox:
    if name == "bwrap":
        path = shutil.which("bwrap")
        if path is None:
            raise DreamerError("sandbox_unavailable", BWRAP_MISSING)
        return BwrapSandbox(path)
    if name == "none":
        return UnconfinedSandbox()
    raise DreamerError("sandbox_unavailable", f"unknown sandbox {name!r}; choose one of: {', '.join(NAMES)}")
