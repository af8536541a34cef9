"""The kernel's side of a zygote: start it, ask it for forks, learn when they exit.

One thread per zygote reads its socket, so the zygote serves any event loop (a kernel
has one; the tests make a new one per test) and exits are delivered to the loop of the
handle that waits for them. The zygote runs as a fresh interpreter, not a fork of the
kernel: it must hold nothing of the kernel's (database, settings, users, secrets).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox.base import BASE_ENV
from dreamer.kernel.sandbox.forkserver.handle import ForkedProcess
from dreamer.kernel.sandbox.runtime import current_runtime

log = logging.getLogger("dreamer.sandbox")

PACKAGE = "dreamer_forkserver"  # child/ as the zygote imports it
READY_TIMEOUT_S = 60.0
MAX_MESSAGE = 1 << 20


@lru_cache(maxsize=1)
def zygote_path_root() -> Path:
    """A private folder holding only `dreamer/sdk` and the zygote's own code (child/), as links.

    With `python -S` no .pth file runs, so this folder is the zygote's whole view of dreamer:
    nothing of the kernel but the code that forks and confines.
    """
    root = Path(tempfile.mkdtemp(prefix="dreamer-zygote-"))
    atexit.register(shutil.rmtree, root, True)
    (root / "dreamer").mkdir()
    (root / "dreamer" / "sdk").symlink_to(current_runtime().sdk_dir, target_is_directory=True)
    (root / PACKAGE).symlink_to(Path(__file__).resolve().parent / "child", target_is_directory=True)
    return root


class Zygote:
    """One zygote process and the workers it forked that have not been released yet."""

    def __init__(self) -> None:
        runtime = current_runtime()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(BASE_ENV)
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([str(zygote_path_root()), *runtime.site_dirs]))
        try:
            self.process = subprocess.Popen(
                [runtime.python, "-S", "-m", f"{PACKAGE}.zygote", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
                cwd="/",
                pass_fds=(theirs.fileno(),),
                # Not in the kernel's group: a ^C at the kernel's terminal is the kernel's to handle.
                start_new_session=True,
            )
        except OSError as error:
            mine.close()
            raise DreamerError("sandbox_unavailable", f"cannot start the forkserver zygote: {error.strerror or error}") from None
        finally:
            theirs.close()
        self.sock = mine
        self.started_at = time.monotonic()
        self.forks = 0
        self.retired = False
        self._lock = threading.Lock()
        self._next_id = 0
        self._pending: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[int]]] = {}
        self._handles: dict[int, ForkedProcess] = {}
        self._early: dict[int, int] = {}  # exits reported before the handle was adopted
        self._abandoned: set[int] = set()  # forked for a start that was cancelled meanwhile
        self._dead = False
        self.sock.settimeout(READY_TIMEOUT_S)
        try:
            hello = json.loads(self.sock.recv(MAX_MESSAGE) or b"{}")
        except (OSError, ValueError):
            hello = {}
        if not hello.get("ready"):
            self.kill()
            raise DreamerError("sandbox_unavailable", "the forkserver zygote did not start (see the kernel's stderr)")
        self.sock.settimeout(None)
        self._reader = threading.Thread(target=self._read_forever, name="dreamer-zygote", daemon=True)
        self._reader.start()

    # -- kernel side ---------------------------------------------------------------------

    @property
    def dead(self) -> bool:
        return self._dead

    def live(self) -> int:
        with self._lock:
            return len(self._handles) + len(self._pending)

    async def fork(self, fds: list[int]) -> int:
        """Ask for a fork with these descriptors (stdin, stdout, stderr, the request, granted folders)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()
        with self._lock:
            if self._dead:
                raise DreamerError("sandbox_unavailable", "the forkserver zygote has stopped")
            self._next_id += 1
            rid = self._next_id
            self._pending[rid] = (loop, future)
            self.forks += 1
            try:
                socket.send_fds(self.sock, [json.dumps({"op": "fork", "id": rid}).encode()], fds)
            except OSError as error:
                self._pending.pop(rid, None)
                raise DreamerError("sandbox_unavailable", f"cannot reach the forkserver zygote: {error.strerror or error}") from None
        return await future

    def adopt(self, handle: ForkedProcess) -> None:
        with self._lock:
            status = self._early.pop(handle.pid, None)
            if status is None and not self._dead:
                self._handles[handle.pid] = handle
                return
            handle.gone = True
            if status is not None:
                self._release(handle.pid)
        handle.exited(status if status is not None else -signal.SIGKILL)

    def signal_group(self, handle: ForkedProcess, signum: int) -> None:
        """Signal a worker's init and its session, but only while its pid is surely still its own:
        until the kernel releases an exited worker, the zygote keeps it as a zombie.

        The init first: it is signalled from outside its pid namespace, so a SIGKILL ends it and
        with it every process of the namespace, even in the moment after the clone and before
        the init's setsid, when there is no group of its pid yet."""
        with self._lock:
            if handle.gone:
                return
            _signal_worker(handle.pid, signum)

    def close(self) -> None:
        """Let the zygote go: it exits on EOF, and its workers with it (PR_SET_PDEATHSIG)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        try:
            self.process.kill()
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass

    # -- the reader thread ---------------------------------------------------------------

    def _read_forever(self) -> None:
        while True:
            try:
                data = self.sock.recv(MAX_MESSAGE)
            except OSError:
                data = b""
            if not data:
                self._lost()
                return
            try:
                message = json.loads(data)
            except ValueError:
                log.error("the forkserver zygote sent something that is not JSON; stopping it")
                self.kill()
                continue
            if "exit" in message:
                self._exited(int(message["exit"]), int(message["status"]))
            elif "id" in message:
                self._answered(message)

    def _answered(self, message: dict[str, Any]) -> None:
        with self._lock:
            waiting = self._pending.pop(int(message["id"]), None)
        if waiting is None:
            return
        loop, future = waiting
        if "pid" not in message:
            error = DreamerError("sandbox_unavailable", f"the forkserver could not fork a worker: {message.get('error')}")
            _deliver(loop, future, error)
            return
        pid = int(message["pid"])

        def settle() -> None:
            if not future.done():
                future.set_result(pid)
            else:
                self._abandon(pid)  # the start was cancelled while the fork was under way

        _call(loop, settle)

    def _abandon(self, pid: int) -> None:
        """A worker nobody will hold: kill it now, and release it as soon as it has exited."""
        with self._lock:
            status = self._early.pop(pid, None)
            if status is not None:
                self._release(pid)
                return
            self._abandoned.add(pid)
            _signal_worker(pid, signal.SIGKILL)

    def _exited(self, pid: int, status: int) -> None:
        with self._lock:
            handle = self._handles.pop(pid, None)
            if pid in self._abandoned:
                self._abandoned.discard(pid)
                self._release(pid)
                return
            if handle is None:
                # Not adopted yet: the zombie is kept (no release) until adopt() has the status.
                self._early[pid] = status
                return
            handle.gone = True
            self._release(pid)
        _call(handle._loop, handle.exited, status)

    def _release(self, pid: int) -> None:
        """The status is ours now: the zygote may reap the worker, and its pid becomes free."""
        try:
            self.sock.send(json.dumps({"op": "release", "pid": pid}).encode())
        except OSError:
            pass

    def _lost(self) -> None:
        """The zygote ended: its workers died with it (PR_SET_PDEATHSIG)."""
        with self._lock:
            self._dead = True
            handles = list(self._handles.values())
            self._handles.clear()
            for handle in handles:
                handle.gone = True
            pending = list(self._pending.values())
            self._pending.clear()
        for handle in handles:
            _call(handle._loop, handle.exited, -signal.SIGKILL)
        for loop, future in pending:
            _deliver(loop, future, DreamerError("sandbox_unavailable", "the forkserver zygote stopped"))
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def _signal_worker(pid: int, signum: int) -> None:
    """The init first (a SIGKILL from outside its pid namespace ends everything in it), then the
    session it leads; the caller holds the pid unreleased, so it cannot be a stranger's."""
    for send in (os.kill, os.killpg):
        try:
            send(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def _call(loop: asyncio.AbstractEventLoop, function: Any, *args: Any) -> None:
    try:
        loop.call_soon_threadsafe(function, *args)
    except RuntimeError:
        pass  # that loop is closed: nobody waits any more


def _deliver(loop: asyncio.AbstractEventLoop, future: asyncio.Future[int], result: Any) -> None:
    def settle() -> None:
        if future.done():
            return
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)

    _call(loop, settle)
