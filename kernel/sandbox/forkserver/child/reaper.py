"""The init's last form: a 79-byte program that only reaps, so pid 1 holds no copy of Python.

A forked init that stays a Python process keeps every page it wrote (each reference count it
touched copies a page), about 2 MB, counted against the worker it serves. Once the worker is
forked and the init confined, all the init has left to do is what this program does:

    wait4(-1, &status, 0, NULL) until the worker (pid 2) is reaped, reaping whatever else
    comes (orphans of the worker, reparented to pid 1), then exit with the worker's status
    as a shell reports it (128+N for signal N); 70 (EXIT_SETUP) if it has no child left.

It is executed from a memfd of the init's own, after the init has dropped every capability,
set no_new_privs, the limits and the seccomp filter (all of which an exec keeps), so it is
as confined as the worker. The program is built here from its instructions, listed with the
assembly they are (tests/sandbox/test_forkserver_reaper.py assembles the listing again
where an assembler is installed). Only x86-64 has one; elsewhere, or where the system
refuses to execute a memfd (vm.memfd_noexec = 2), the init goes on waiting in Python.
"""

from __future__ import annotations

import fcntl
import os
import platform
import struct

WORKER_PID = 2  # the init's first child in its new pid namespace
PROGRAM_NAME = "dreamer-init"

# x86-64, Linux system calls: offset, [label:] instruction, and what it is for.
X86_64 = bytes.fromhex(
    "4883ec10"      # 00 sub rsp, 16            room for the status
    "b83d000000"    # 04 wait: mov eax, 61      wait4
    "bfffffffff"    # 09 mov edi, -1            any child
    "4889e6"        # 0e mov rsi, rsp           &status
    "31d2"          # 11 xor edx, edx           no options
    "4531d2"        # 13 xor r10d, r10d         no rusage
    "0f05"          # 16 syscall
    "4883f802"      # 18 cmp rax, 2             the worker?
    "7412"          # 1c je worker
    "4885c0"        # 1e test rax, rax
    "79e1"          # 21 jns wait               another child reaped: wait on
    "4883f8fc"      # 23 cmp rax, -4            EINTR
    "74db"          # 27 je wait
    "bf46000000"    # 29 mov edi, 70            no child left
    "eb18"          # 2e jmp done
    "8b0424"        # 30 worker: mov eax, [rsp]
    "89c7"          # 33 mov edi, eax
    "83e77f"        # 35 and edi, 0x7f          the signal that ended it, if any
    "7408"          # 38 je exited
    "81c780000000"  # 3a add edi, 128           128+N
    "eb06"          # 40 jmp done
    "c1e808"        # 42 exited: shr eax, 8
    "0fb6f8"        # 45 movzx edi, al          its exit code
    "b8e7000000"    # 48 done: mov eax, 231    exit_group
    "0f05"          # 4d syscall
)

_MACHINES = {"x86_64": (62, X86_64)}  # e_machine, code
_BASE = 0x400000
_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_PHDR = struct.Struct("<IIQQQQQQ")


def elf(machine: int, code: bytes) -> bytes:
    """A static executable of one read-and-execute segment holding the headers and `code`."""
    entry_offset = _EHDR.size + _PHDR.size
    size = entry_offset + len(code)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)  # 64-bit, little-endian, version 1, System V
    header = _EHDR.pack(ident, 2, machine, 1, _BASE + entry_offset, _EHDR.size, 0, 0,
                        _EHDR.size, _PHDR.size, 1, 0, 0, 0)  # ET_EXEC, one program header, no sections
    segment = _PHDR.pack(1, 5, 0, _BASE, _BASE, size, size, 0x1000)  # PT_LOAD, PF_R | PF_X
    return header + segment + code


def program() -> bytes | None:
    """This machine's reaper, or None where there is none."""
    found = _MACHINES.get(platform.machine())
    return elf(*found) if found is not None else None


def prepare() -> int | None:
    """A sealed memfd holding the reaper, made before the init confines itself (the write must
    not meet the worker's file size limit), or None. Its own, not the zygote's: a worker may
    chmod its init's executable through /proc/1/exe, which must reach no other worker."""
    code = program()
    if code is None:
        return None
    try:
        fd = os.memfd_create(PROGRAM_NAME, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except OSError:
        return None
    os.write(fd, code)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK)
    return fd


def become(fd: int | None, worker: int) -> None:
    """Replace this process by the reaper; returns only if it cannot (the caller then waits itself)."""
    if fd is None or worker != WORKER_PID:
        return
    try:
        os.execve(fd, [PROGRAM_NAME], {})
    except OSError:
        os.close(fd)
