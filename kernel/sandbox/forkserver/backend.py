"""The `forkserver` backend: workers forked from a warm zygote, each in a sandbox of its own.

Opt-in (DREAMER_SANDBOX=forkserver); decision 0050 says why and what it must keep. The
sandbox is bwrap's (plan.py), set up by the fork itself (child/enter.py) before any agent
code runs; the cgroups, rlimits and seccomp filter are the other backends' own.

One zygote per backend, that is per sandbox profile: the interpreter and the SDK are
the kernel's, and limits, mounts and environment come with each fork. It is replaced
after FORKS_PER_ZYGOTE forks or ZYGOTE_SECONDS, whichever comes first: a fresh
interpreter, so a fresh hash seed, and nothing long-lived shared by many workers. A
replaced zygote lives on until its last worker has gone.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import threading
import time

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox import memory_cgroup, pids
from dreamer.kernel.sandbox.base import STDOUT_SLACK_BYTES, Launch, Sandbox, SandboxSpec
from dreamer.kernel.sandbox.forkserver.handle import ForkedProcess
from dreamer.kernel.sandbox.forkserver.plan import fork_request
from dreamer.kernel.sandbox.forkserver.server import Zygote

FORKS_PER_ZYGOTE = 500
ZYGOTE_SECONDS = 15 * 60.0


class ForkServerSandbox(Sandbox):
    name = "forkserver"

    def __init__(self, forks_per_zygote: int = FORKS_PER_ZYGOTE, zygote_seconds: float = ZYGOTE_SECONDS) -> None:
        self.forks_per_zygote = forks_per_zygote
        self.zygote_seconds = zygote_seconds
        self._lock = threading.Lock()
        self._zygote: Zygote | None = None
        self._retired: list[Zygote] = []
        atexit.register(self.close)

    async def prepare(self) -> None:
        """The zygote, started at kernel start rather than by the first worker (decision 0050)."""
        await asyncio.to_thread(self.zygote)

    def plan(self, spec: SandboxSpec) -> Launch:
        raise DreamerError("internal", "forkserver workers are forked from a zygote, not executed from a command line")

    def _due(self, zygote: Zygote | None) -> bool:
        """Whether `zygote` is missing, dead or due for replacement."""
        return (
            zygote is None
            or zygote.dead
            or zygote.forks >= self.forks_per_zygote
            or time.monotonic() - zygote.started_at >= self.zygote_seconds
        )

    def zygote(self) -> Zygote:
        """The current zygote; a new one when there is none, it died, or it is due for replacement."""
        with self._lock:
            current = self._zygote
            if current is not None and self._due(current):
                current.retired = True
                self._retired.append(current)
                current = self._zygote = None
            self._retired = [z for z in self._retired if not self._close_if_idle(z)]
            if current is None:
                current = self._zygote = Zygote()
            return current

    @staticmethod
    def _close_if_idle(zygote: Zygote) -> bool:
        if zygote.dead or zygote.live() == 0:
            zygote.close()
            return True
        return False

    async def _spawn(
        self, spec: SandboxSpec, group: pids.PidsGroup | None, memory: pids.PidsGroup | None = None
    ) -> asyncio.subprocess.Process:
        # base.Sandbox.start made the cgroups, as for every backend; the fork joins them before it unshares.
        return await self._fork(spec, [g.procs for g in (group, memory) if g is not None])

    async def _fork(self, spec: SandboxSpec, cgroups: list[str]) -> ForkedProcess:
        current = self._zygote
        # Starting a zygote takes a fresh interpreter's imports: never on the event loop.
        zygote = current if current is not None and not self._due(current) else await asyncio.to_thread(self.zygote)
        request = fork_request(spec)
        request.message["cgroups"] = cgroups
        # The request travels in a memfd that only the fork reads: the zygote never parses a
        # user's paths or environment, so nothing of them stays in its memory for later forks.
        plan_fd = os.memfd_create("dreamer-fork-request", os.MFD_CLOEXEC)
        # The kernel's ends stay here; the worker's ends go to the zygote and are closed after.
        stdin_r, stdin_w = os.pipe2(os.O_CLOEXEC)
        stdout_r, stdout_w = os.pipe2(os.O_CLOEXEC)
        stderr_r, stderr_w = os.pipe2(os.O_CLOEXEC)
        ours = [stdin_w, stdout_r, stderr_r]
        try:
            try:
                os.write(plan_fd, json.dumps(request.message).encode())
                os.lseek(plan_fd, 0, os.SEEK_SET)
                pid = await zygote.fork([stdin_r, stdout_w, stderr_w, plan_fd, *request.mount_fds])
            finally:
                for fd in (stdin_r, stdout_w, stderr_w, plan_fd):
                    os.close(fd)
                request.close()
            handle = ForkedProcess(pid, zygote.signal_group, asyncio.get_running_loop())
            zygote.adopt(handle)
        except BaseException:
            for fd in ours:
                try:
                    os.close(fd)
                except OSError:
                    pass
            raise
        try:
            await handle.connect(stdin_w, stdout_r, stderr_r, spec.limits.max_message_bytes + STDOUT_SLACK_BYTES)
        except BaseException:
            handle.kill()  # a worker the kernel cannot talk to must not live on
            raise
        return handle

    def kill(self, process: asyncio.subprocess.Process) -> None:
        """SIGKILL the worker's init (so its whole pid namespace) and session, then its cgroups."""
        if not isinstance(process, ForkedProcess):
            super().kill(process)
            return
        process.kill()
        pids.kill(process)
        memory_cgroup.kill(process)
        process.close_protocol_pipes()

    def close(self) -> None:
        with self._lock:
            zygotes = [*self._retired, *([self._zygote] if self._zygote is not None else [])]
            self._zygote, self._retired = None, []
        for zygote in zygotes:
            zygote.close()
