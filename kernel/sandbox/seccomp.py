"""A seccomp filter for bwrap workers: the kernel interfaces an agent never needs.

Namespaces, dropped capabilities and rlimits already stop most of these calls; the
filter removes them from the attack surface as well, the way Docker's default
profile does for containers (the docker backend gets Docker's own). It denies with
EPERM rather than killing, so a library probing for a feature sees "not permitted"
and carries on.

The BPF program is built once with libseccomp (through pyseccomp, a ctypes binding
of the system's libseccomp.so.2) and handed to bwrap as `--seccomp FD`. Where
libseccomp is missing the workers start without the filter and `dreamer doctor`
says so.
"""

from __future__ import annotations

import errno
import logging
import os
from functools import lru_cache

log = logging.getLogger("dreamer.sandbox")

# Grouped by what they would give an agent. Each is refused by Docker's default profile too.
DENIED: tuple[str, ...] = (
    # other processes' memory and execution
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # the kernel itself: modules, kexec, reboot, swap, clocks, accounting, quotas
    "init_module", "finit_module", "delete_module", "create_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "acct", "quotactl", "syslog", "iopl", "ioperm", "uselib", "ustat", "sysfs", "_sysctl",
    "lookup_dcookie", "nfsservctl", "get_kernel_syms", "query_module", "vm86", "vm86old",
    # the kernel's large, bug-prone interfaces
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "add_key", "request_key", "keyctl",
    # namespaces and mounts: the sandbox is set up before the filter applies and stays as it is
    "unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig",
    "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    # handles that bypass path checks
    "name_to_handle_at", "open_by_handle_at",
    # execution domains (READ_IMPLIES_EXEC and friends)
    "personality",
)


@lru_cache(maxsize=1)
def program() -> bytes | None:
    """The compiled filter for this machine's architecture, or None without libseccomp."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as error:  # the binding, or libseccomp.so.2 itself, is missing
        log.warning("workers start without a seccomp filter: %s", error)
        return None
    try:
        filt = seccomp.SyscallFilter(seccomp.ALLOW)
        for name in DENIED:
            try:
                filt.add_rule(seccomp.ERRNO(errno.EPERM), name)
            except (ValueError, RuntimeError, OSError):
                continue  # not a syscall on this architecture (vm86 outside i386, ...)
        # libseccomp writes to a descriptor, not a Python stream.
        with os.fdopen(os.memfd_create("dreamer-seccomp-build", os.MFD_CLOEXEC), "w+b") as out:
            filt.export_bpf(out)
            out.seek(0)
            code = out.read()
    except Exception as error:  # noqa: BLE001 - a broken libseccomp must not stop workers from starting
        log.warning("workers start without a seccomp filter: libseccomp failed (%s)", error)
        return None
    return code


def status() -> str:
    """One sentence for `dreamer doctor`."""
    if program() is None:
        return "no seccomp filter (libseccomp or pyseccomp is missing)"
    return f"seccomp filter denies {len(DENIED)} system calls"


def program_fd() -> int | None:
    """A descriptor bwrap reads the filter from (closed by the launch after the start)."""
    code = program()
    if code is None:
        return None
    fd = os.memfd_create("dreamer-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, code)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
