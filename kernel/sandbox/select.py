"""Choosing a backend by name (DREAMER_SANDBOX): `auto` by default (bwrap when it is
installed, else docker when an engine answers), `bwrap` or `docker` when asked for,
`forkserver` (decision 0050: workers forked from a warm zygote) only when asked for in
this round, `none` only on request and never chosen automatically; and finding out
which of them work on this machine."""

from __future__ import annotations

import asyncio
import shutil
from typing import TypedDict

from dreamer.kernel.config import Limits
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox.base import Sandbox
from dreamer.kernel.sandbox.bwrap import BwrapSandbox
from dreamer.kernel.sandbox.unconfined import UnconfinedSandbox

NAMES = ("bwrap", "docker", "none")
# Chosen only by name, and not probed by `dreamer doctor` yet: opt-in while it is new.
OPT_IN = ("forkserver",)

BWRAP_MISSING = (
    "bubblewrap (bwrap) is not installed; install the Debian package bubblewrap, "
    "or set DREAMER_SANDBOX=none to run agents unconfined (unsafe)"
)
NONE_WARNING = "works, but runs agent code unconfined with the kernel's privileges; only for hosts without a sandbox"


class BackendStatus(TypedDict):
    name: str
    ok: bool
    reason: str


def get_sandbox(name: str) -> Sandbox:
    if name == "auto":
        return _automatic()
    if name == "bwrap":
        path = shutil.which("bwrap")
        if path is None:
            raise DreamerError("sandbox_unavailable", BWRAP_MISSING)
        return BwrapSandbox(path)
    if name == "docker":
        # Imported here: the Docker SDK (and requests) is only loaded by kernels that use it.
        from dreamer.kernel.sandbox.docker import open_docker_sandbox

        return open_docker_sandbox()
    if name == "forkserver":
        # Imported here: only kernels that chose it load the fork server's code.
        from dreamer.kernel.sandbox.forkserver import ForkServerSandbox

        return ForkServerSandbox()
    if name == "none":
        return UnconfinedSandbox()
    raise DreamerError("sandbox_unavailable", f"unknown sandbox {name!r}; choose one of: auto, {', '.join((*NAMES, *OPT_IN))}")


def _automatic() -> Sandbox:
    """bwrap, else docker; never `none`, which runs agents unconfined and must be asked for."""
    if shutil.which("bwrap") is not None:
        return get_sandbox("bwrap")
    try:
        return get_sandbox("docker")
    except DreamerError as docker_error:
        raise DreamerError(
            "sandbox_unavailable",
            f"no sandbox works here: bubblewrap is not installed (Debian package bubblewrap) and "
            f"docker is not usable ({docker_error.message.rstrip('.')}); install one of them, "
            "or set DREAMER_SANDBOX=none to run agents unconfined (unsafe)",
        ) from None


async def check_backend(name: str, limits: Limits | None = None, active: Sandbox | None = None) -> BackendStatus:
    """Whether `name` can start a worker here: a real start of a trivial interpreter in it."""
    sandbox: Sandbox | None = active if active is not None and active.name == name else None
    made = sandbox is None
    try:
        if sandbox is None:
            sandbox = await asyncio.to_thread(get_sandbox, name)
        await sandbox.probe(limits)
    except DreamerError as error:
        return {"name": name, "ok": False, "reason": error.message}
    finally:
        # A backend made only for the probe lets go of what it holds (docker: its engine client).
        close = getattr(sandbox, "close", None) if made else None
        if close is not None:
            await asyncio.to_thread(close)
    reason = NONE_WARNING if name == "none" else "works"
    return {"name": name, "ok": True, "reason": reason}


async def available_backends(limits: Limits | None = None, active: Sandbox | None = None) -> list[BackendStatus]:
    """Every backend with whether it works here and, when it does not, why (for `dreamer doctor`).

    Probed one after the other: on a 2-core machine three sandboxes starting at once
    would mostly measure each other.
    """
    return [await check_backend(name, limits, active) for name in NAMES]
