"""Serve an application over a kernel with uvicorn, one process per DREAMER_HOME.

The application is built by the composition root (host/server.py, which `dreamer up`
runs); this module owns the pid file and the server's settings.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import uvicorn
from fastapi import FastAPI

from dreamer.kernel.config import Settings, load_settings
from dreamer.kernel.connguard import ConnectionLimits, accept_backlog, connection_cap, guarded_protocol, raise_fd_limit
from dreamer.contracts.errors import DreamerError


def _running_pid(path: os.PathLike[str]) -> int | None:
    try:
        pid = int(open(path).read().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def serve(host: str, port: int, create_app: Callable[[Settings], FastAPI]) -> None:
    settings = load_settings(host=host, port=port)
    settings.home.mkdir(parents=True, exist_ok=True)
    pid = _running_pid(settings.pid_path)
    if pid is not None and pid != os.getpid():
        raise DreamerError("conflict", f"a kernel is already running for {settings.home} (pid {pid}); stop it with `dreamer down`")
    settings.pid_path.write_text(str(os.getpid()))
    limits = ConnectionLimits(settings.header_timeout_s, settings.body_timeout_s, settings.keepalive_timeout_s,
                              settings.max_connections)
    fds = raise_fd_limit()
    cap = connection_cap(settings.max_connections, fds)
    try:
        uvicorn.run(
            create_app(settings),
            host=host,
            port=port,
            log_level=os.environ.get("DREAMER_LOG_LEVEL", "info"),
            # uvloop (libuv) where it is installed, as it is with the kernel's dependencies:
            # less CPU per request than the standard loop (decision 0054). Workers keep real
            # pipes under it: the sandbox starts them itself (kernel/sandbox/spawn.py), not
            # through the loop, which would give them socketpairs.
            loop="auto",
            # httptools parses HTTP/1.1 in C: a third of the HTTP floor of a warm call;
            # the guarded subclass drops slow clients and caps connections (kernel/connguard.py).
            http=guarded_protocol(limits, cap),
            timeout_keep_alive=int(max(1, settings.keepalive_timeout_s)),
            backlog=accept_backlog(fds),
        )
    finally:
        if _running_pid(settings.pid_path) in (None, os.getpid()):
            settings.pid_path.unlink(missing_ok=True)


if __name__ == "__main__":
    # The kernel alone has no Sidekick, pages or starters; the whole installation starts from the host.
    sys.exit("start the kernel with `python -m dreamer.host.server [HOST] [PORT]` (or `dreamer up`)")
