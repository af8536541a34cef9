"""The dreamer CLI for tests, forked from a process that has imported it once.

`KernelProc.cli` (kernelproc.py) runs the CLI hundreds of times in a suite run, and each `dreamer`
process spent about 0.6 CPU-s importing typer, click, rich, httpx and pydantic and building its
commands before its one HTTP request: a quarter of the suite's CPU (docs/PERFORMANCE.md, seventh
session). This server imports the CLI once; each request forks a child that runs the CLI's own
`main()` with the request's arguments, environment, working folder and standard streams, and ends
with its exit code, as the `dreamer` script would. The child is a process of its own (the kernel
sees a client like any other); what it skips is the interpreter's start and the imports, which the
tests that start the real `dreamer` script (tests/cli, tests/e2e/test_calls.py and others) still run.

    python cli_forkserver.py SOCKET      prints "ready" once listening; ends when its stdin closes

A request is one line of JSON on a connection: {"args", "env", "cwd", "stdin", "stdout", "stderr"}
(the last three are file paths). The server answers {"pid": N} at once, then {"returncode": R}.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import traceback
from typing import Any


def _prepare() -> Any:
    """Import the CLI and what its commands import when they run."""
    import typer.main

    import dreamer.cli.main as cli_main

    typer.main.get_command(cli_main.app)  # every command built once: typer's parameter adapters (pydantic) imported
    import h11  # noqa: F401  (httpx's transport, imported with the first request)
    import httpcore  # noqa: F401
    import httpx

    httpx.Client().close()
    return cli_main


def _child(cli_main: Any, request: dict[str, Any]) -> None:
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, (path, flags) in enumerate(((request["stdin"], os.O_RDONLY),
                                            (request["stdout"], os.O_WRONLY), (request["stderr"], os.O_WRONLY))):
            opened = os.open(path, flags)
            os.dup2(opened, fd)
            os.close(opened)
        sys.argv = ["dreamer", *request["args"]]
        try:
            cli_main.main()
            code = 0
        except SystemExit as done:
            if done.code is None or isinstance(done.code, int):
                code = done.code or 0
            else:
                sys.stderr.write(f"{done.code}\n")
                code = 1
    except BaseException:  # noqa: BLE001 - the child must end here, whatever happened
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve(path: str) -> None:
    cli_main = _prepare()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(128)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    running: dict[int, socket.socket] = {}
    while True:
        # Children are reaped every 5 ms while any runs; the server sleeps in select otherwise.
        readable, _, _ = select.select([server, sys.stdin], [], [], 0.005 if running else None)
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 4096):
            break  # the test process ended
        if server in readable:
            conn, _ = server.accept()
            with conn.makefile("rb") as lines:
                line = lines.readline()
            if not line:
                conn.close()
                continue
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                server.close()
                for other in running.values():
                    other.close()
                conn.close()
                _child(cli_main, request)
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            running[pid] = conn
        while running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = running.pop(pid, None)
            if conn is not None:
                try:
                    conn.sendall(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
                except OSError:
                    pass
                conn.close()
    server.close()


if __name__ == "__main__":
    serve(sys.argv[1])
