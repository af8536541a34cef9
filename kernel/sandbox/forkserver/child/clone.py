"""A fork that is born in new namespaces: clone(2) with namespace flags, over ctypes.

Python 3.11 has no os.clone, and os.fork cannot make a process the first of a new pid
namespace: unshare(CLONE_NEWPID) applies only to the caller's children, which is why a
worker used to need a monitor (unshare, then fork the namespace's init). A clone with
CLONE_NEWPID makes the zygote's own child that init, so no monitor exists (decision 0050,
"Later (2026-12-07, perf30)").

The call does what os.fork does around fork(): PyOS_BeforeFork, the system call with the
GIL held (ctypes.PyDLL does not release it), then PyOS_AfterFork_Child or _Parent, so the
interpreter's locks, its threads' state and os.register_at_fork callbacks are handled as
for a fork. What glibc's fork() does and a raw clone does not: its atfork handlers (the
zygote registers none; it is single-threaded, so no lock of glibc's is held across the
call) and the thread id it caches (glibc ≥ 2.34 reads the id from the kernel where it
matters, raise() and pthread_kill; the child only forks, waits and exits, and the worker it
forks with os.fork gets a fresh cache).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import signal

# clone(2)'s number and whether the architecture takes the stack first (s390).
_CLONE = {"x86_64": (56, False), "aarch64": (220, False), "riscv64": (220, False),
          "ppc64le": (120, False), "s390x": (120, True)}

_pylibc = ctypes.PyDLL(None, use_errno=True)  # PyDLL: the GIL stays held, as in os.fork
_pylibc.syscall.restype = ctypes.c_long
_python = ctypes.pythonapi


def clone(flags: int) -> int:
    """Fork into the namespaces in `flags` (CLONE_NEW*): 0 in the child, its pid in the parent.

    The child's exit is reported with SIGCHLD, as a fork's, so waitpid and waitid see it
    without __WALL.
    """
    known = _CLONE.get(platform.machine())
    if known is None:
        raise OSError(errno.ENOSYS, f"clone: unknown system call number on {platform.machine()}")
    number, stack_first = known
    word = ctypes.c_ulong(flags | signal.SIGCHLD)
    zero = ctypes.c_ulong(0)
    args = (zero, word) if stack_first else (word, zero)
    _python.PyOS_BeforeFork()
    pid = _pylibc.syscall(ctypes.c_long(number), *args, zero, zero, zero)
    err = ctypes.get_errno()
    if pid == 0:
        _python.PyOS_AfterFork_Child()
        return 0
    _python.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone: {os.strerror(err)}")
    return int(pid)
