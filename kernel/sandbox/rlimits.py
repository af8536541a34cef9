"""Resource ceilings set in the child between fork and exec.

They are inherited through exec, so they bind bwrap, the sandboxed interpreter and
everything it spawns. RLIMIT_NPROC is left out on purpose: it counts processes per
real uid on the whole host, and the kernel runs as root here (where it is not even
enforced), so it would either do nothing or starve the kernel's other workers.
Issue 3 bounds processes with a cgroup pids limit instead.
"""

from __future__ import annotations

import resource
from collections.abc import Callable

from dreamer.kernel.config import Limits

MIB = 1024 * 1024


def _capped(kind: int, wanted: int) -> int:
    """Never ask for more than the current hard limit: raising it needs privilege."""
    _, hard = resource.getrlimit(kind)
    if hard == resource.RLIM_INFINITY:
        return wanted
    return min(wanted, hard)


def rlimit_table(limits: Limits) -> list[tuple[int, int]]:
    """(resource, value) pairs; soft == hard so the child cannot raise them back."""
    wanted = [
        (resource.RLIMIT_AS, limits.address_space_mb * MIB),
        # At the hard CPU limit the kernel sends SIGKILL, which no agent can catch.
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * MIB),
        (resource.RLIMIT_NOFILE, limits.open_files),
    ]
    return [(kind, _capped(kind, value)) for kind, value in wanted]


def preexec(limits: Limits) -> Callable[[], None]:
    """A preexec_fn that only calls setrlimit with values computed beforehand.

    The forked child of a threaded parent must do as little as possible before exec,
    so everything (including the capping above) happens in the parent.
    """
    table = rlimit_table(limits)
    setrlimit = resource.setrlimit

    def apply() -> None:
        for kind, value in table:
            setrlimit(kind, (value, value))

    return apply
