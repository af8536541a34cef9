"""The fork server backend (decision 0050): see backend.py."""

from dreamer.kernel.sandbox.forkserver.backend import ForkServerSandbox

__all__ = ["ForkServerSandbox"]
