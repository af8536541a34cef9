"""Resource ceilings set in the child between fork and exec.

They are inherited through exec, so they bind bwrap, the sandboxed interpreter and
everything it spawns. RLIMIT_NPROC is not among them: set here it would count every
process of the kernel's uid on the host, and it does not bind root at all. The
`processes` limit is kept by a pids cgroup or inside the sandbox (see pids.py);
this module only joins the worker to its cgroup, here, before exec, so that not
even bwrap's first fork escapes the count.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable

from dreamer.kernel.config import Limits

MIB = 1024 * 1024
# Far above any real limit, and still a value setrlimit accepts.
MAX_RLIMIT = 2**62


def _capped(kind: int, wanted: int) -> int:
    """Never ask for more than the current hard limit: raising it needs privilege."""
    _, hard = resource.getrlimit(kind)
    wanted = min(wanted, MAX_RLIMIT)
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


def preexec(limits: Limits, cgroup_procs: str | None = None) -> Callable[[], None]:
    """A preexec_fn that only makes system calls with values computed beforehand.

    The forked child of a threaded parent must do as little as possible before exec,
    so everything (including the capping above) happens in the parent. With
    `cgroup_procs`, the child first moves itself into that cgroup ("0" is the
    writer itself); a failure aborts the start rather than run it unlimited.
    """
    table = rlimit_table(limits)
    setrlimit = resource.setrlimit

    def apply() -> None:
        if cgroup_procs is not None:
            fd = os.open(cgroup_procs, os.O_WRONLY | os.O_CLOEXEC)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
        for kind, value in table:
            setrlimit(kind, (value, value))

    return apply
