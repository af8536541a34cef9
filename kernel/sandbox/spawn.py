"""Start a worker process whose stdin, stdout and stderr are real pipes, on any event loop.

`asyncio.create_subprocess_exec` leaves the process to the running loop: the standard loop
gives the child `os.pipe()`s, uvloop (libuv) gives it socketpairs. The worker protocol and
the hostile-agent suite are written for pipes (a socket takes more than a pipe does:
ancillary data, `shutdown`, `getpeername`...), so every backend starts its process here,
whatever loop the kernel runs (decision 0054):

- the pipes are made by `subprocess.Popen`, as the standard loop makes them (its own
  subprocess transport, `_UnixSubprocessTransport`, is reused: same streams, same
  `asyncio.subprocess.Process`, same `wait()` semantics);
- the loop wraps them with `connect_read_pipe`/`connect_write_pipe`, which both loops
  implement for pipes;
- the exit is seen through a pidfd the loop watches (`add_reader`), not through a child
  watcher: uvloop has none, and the standard loop's default starts a thread per child.
  Where pidfds are missing (Linux before 5.3) a thread waits for the child instead.
"""

from __future__ import annotations

import asyncio
import os
import threading
from asyncio import unix_events
from asyncio.subprocess import Process, SubprocessStreamProtocol
from typing import Any


async def create_process(*argv: str, limit: int, **popen: Any) -> Process:
    """What `asyncio.create_subprocess_exec(*argv, limit=limit, **popen)` returns, with pipes.
    `popen` takes stdin/stdout/stderr and Popen's other keywords (env, cwd, pass_fds...)."""
    loop = asyncio.get_running_loop()
    protocol = SubprocessStreamProtocol(limit=limit, loop=loop)
    waiter: asyncio.Future[None] = loop.create_future()
    # Popen runs here, as in the standard loop's subprocess_exec (fork and exec are synchronous
    # there too); the transport then connects the pipes on the loop and settles `waiter`.
    transport = unix_events._UnixSubprocessTransport(  # type: ignore[attr-defined]
        loop, protocol, list(argv), False, popen.pop("stdin", None), popen.pop("stdout", None),
        popen.pop("stderr", None), 0, waiter=waiter, **popen,
    )
    _watch_exit(loop, transport)
    try:
        await waiter
    except BaseException:
        transport.close()
        await transport._wait()
        raise
    return Process(transport, protocol, loop)


def _watch_exit(loop: asyncio.AbstractEventLoop, transport: Any) -> None:
    """Reap the child once it exits and hand its status to the transport (as a child watcher does)."""
    pid: int = transport.get_pid()
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        threading.Thread(target=_wait_in_thread, args=(loop, transport, pid), daemon=True,
                         name="dreamer-worker-wait").start()
        return

    def exited() -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        # As asyncio's child watchers hand it over: on the loop, after its current turn.
        loop.call_soon(transport._process_exited, _reap(pid))

    loop.add_reader(pidfd, exited)


def _wait_in_thread(loop: asyncio.AbstractEventLoop, transport: Any, pid: int) -> None:
    code = _reap(pid)
    try:
        loop.call_soon_threadsafe(loop.call_soon, transport._process_exited, code)
    except RuntimeError:
        pass  # the loop has closed: nobody waits any more


def _reap(pid: int) -> int:
    """The child's exit status as asyncio reports it (-N for a signal); 255 if it cannot be known."""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return 255  # reaped by someone else (Popen.poll in the transport's close): as asyncio's watchers say
    return os.waitstatus_to_exitcode(status)
