"""Sandboxes for agent workers: one interface, backends `bwrap` (default) and `none`."""

from dreamer.kernel.sandbox.base import Launch, Sandbox, SandboxSpec
from dreamer.kernel.sandbox.select import get_sandbox

__all__ = ["Launch", "Sandbox", "SandboxSpec", "get_sandbox"]
