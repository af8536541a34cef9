"""Sandboxes for agent workers: one interface, backends `bwrap` (default), `docker`, `forkserver` (opt-in) and `none`."""

from dreamer.kernel.sandbox.base import Launch, Mount, Sandbox, SandboxSpec
from dreamer.kernel.sandbox.select import get_sandbox

__all__ = ["Launch", "Mount", "Sandbox", "SandboxSpec", "get_sandbox"]
