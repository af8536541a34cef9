"""The zygote: imports the SDK worker once, then forks sandboxed workers on request.

Run by the kernel (../server.py) as `python -S -m dreamer_forkserver.zygote FD`, FD being
its end of a SOCK_SEQPACKET socket pair. It holds no user's or agent's data: it reads
nothing but the SDK, runs only the SDK's own warm-up function, and its messages carry
only what the kernel chose (paths, limits, the worker's environment, descriptors).

Messages are JSON, one per packet:
  kernel → zygote  {"op": "fork", "id": n} + descriptors: stdin, stdout and stderr of the
                   worker, a memfd with plan.py's request, then the granted folders. Only
                   the fork reads the request: the zygote never holds a user's paths or
                   environment, not even in memory it freed, which every later fork copies.
                   {"op": "release", "pid": p}: the kernel has the status; reap it
  zygote → kernel  {"ready": true, "pid": p} once, when warm
                   {"id": n, "pid": p} or {"id": n, "error": text}
                   {"exit": p, "status": code}: code as asyncio reports it (-N: signal N)

An exited worker stays a zombie until the kernel says "release": until then its pid
cannot be reused, so the kernel's killpg can never hit a stranger.
"""

from __future__ import annotations

import gc
import json
import os
import selectors
import signal
import socket
import sys
from typing import Any

from . import enter

MAX_MESSAGE = 1 << 20
MAX_FDS = 256


def warm_sdk() -> None:
    """Run the SDK's first-use paths once, on a function of the zygote's own.

    pydantic builds much of itself on the first model; done here, every fork starts with it
    built. The registry is emptied afterwards: a worker serves only what its agent defines.
    """
    from dreamer.sdk import REGISTRY, Context, function

    @function
    def warmup(ctx: Context, text: str, count: int = 1, names: list[str] | None = None) -> dict[str, object]:
        """Exercise argument validation and result serialisation once."""
        return {"text": text, "count": count, "names": names or []}

    entry = REGISTRY.get("warmup")
    if entry is not None:
        entry.result.dump({"text": "a", "count": 1, "names": []}, "warmup")
        entry.validate({"text": "a", "names": ["b"]})
    REGISTRY.clear()


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.send(json.dumps(message).encode())


def _exit_code(info: os.waitid_result) -> int:
    if info.si_code == os.CLD_EXITED:
        return info.si_status
    return -info.si_status  # killed or dumped: -N, as asyncio reports a signal


def serve(sock: socket.socket, context: dict[str, Any]) -> None:
    waking_r, waking_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(waking_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    running: set[int] = set()
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ, "control")
    selector.register(waking_r, selectors.EVENT_READ, "child")
    while True:
        for key, _ in selector.select():
            if key.data == "child":
                try:
                    while os.read(waking_r, 4096):
                        pass
                except BlockingIOError:
                    pass
                for pid in sorted(running):
                    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                    if info is not None and info.si_pid == pid:
                        running.discard(pid)
                        _send(sock, {"exit": pid, "status": _exit_code(info)})
                continue
            data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, MAX_FDS)
            if not data:
                return  # the kernel is gone or retired us: our workers die with us
            try:
                message = json.loads(data)
                if message.get("op") == "release":
                    os.waitpid(int(message["pid"]), 0)
                elif message.get("op") == "fork":
                    try:
                        pid = enter.fork_worker(fds, context)
                    except OSError as error:
                        _send(sock, {"id": message.get("id"), "error": str(error)})
                    else:
                        running.add(pid)
                        _send(sock, {"id": message.get("id"), "pid": pid})
                        # A fork past a SIGCHLD already handled is checked at the next one.
            finally:
                for fd in fds:
                    os.close(fd)


def main() -> int:
    sock = socket.socket(fileno=int(sys.argv[1]))
    sock.set_inheritable(False)
    own_path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    import dreamer.sdk.worker  # noqa: F401 - the one import every fork shares

    warm_sdk()
    enter.forget_zygote(own_path[0] if own_path else "")
    # Keep the collector from writing to every shared object in every child.
    gc.collect()
    gc.freeze()
    # Each worker's init checks this to learn whether the zygote outlived its clone (enter.py).
    context = {"zygote_pid": os.getpid(), "zygote_pidfd": os.pidfd_open(os.getpid()), "own_path": own_path}
    _send(sock, {"ready": True, "pid": os.getpid()})
    serve(sock, context)
    return 0


if __name__ == "__main__":
    sys.exit(main())
