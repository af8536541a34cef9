"""The seccomp filter: kernel interfaces an agent never needs are refused in every confining backend."""

from __future__ import annotations

import platform

import pytest
from sandbox_helpers import Layout, reported, run_code

from dreamer.kernel.sandbox import Sandbox
from dreamer.kernel.sandbox.seccomp import DENIED, program, status

# x86_64 numbers; the probe calls the kernel directly, with no libc wrapper in between.
PROBE = r"""
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    ctypes.set_errno(0)
    return [libc.syscall(nr, *args), ctypes.get_errno()]
print(json.dumps({
    "ptrace_traceme": call(101, 0, 0, 0, 0),       # allowed to any process without a filter
    "keyctl_get_id": call(250, 0, -3, 0, 0, 0),     # KEYCTL_GET_KEYRING_ID of the session keyring
    "unshare_user": call(272, 0x10000000),          # CLONE_NEWUSER
    "personality_rie": call(135, 0x0400000),        # READ_IMPLIES_EXEC
    "getpid": call(39),
}))
"""

EPERM = 1

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="the probe uses x86_64 system call numbers")


def test_the_filter_is_built_here() -> None:
    assert program() is not None, status()
    assert status() == f"seccomp filter denies {len(DENIED)} system calls"


def test_denied_calls_fail_with_eperm_and_ordinary_ones_work(confined: Sandbox, layout: Layout) -> None:
    report = reported(run_code(confined, layout, PROBE))
    denied = ["keyctl_get_id", "unshare_user", "personality_rie"]
    # Docker's default profile (the docker backend's) allows ptrace on kernels since 4.8; ours does not.
    denied += ["ptrace_traceme"] if confined.name == "bwrap" else []
    for name in denied:
        assert report[name] == [-1, EPERM], (name, report[name])
    pid, error = report["getpid"]
    assert pid > 0 and error == 0


def test_without_confinement_the_same_probe_gets_through(layout: Layout) -> None:
    # The control: the none backend has no filter, so the probe must see a difference.
    from dreamer.kernel.sandbox import get_sandbox

    report = reported(run_code(get_sandbox("none"), layout, PROBE))
    assert report["ptrace_traceme"] == [0, 0]
