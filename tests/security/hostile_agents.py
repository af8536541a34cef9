"""The agents of the security suite: a victim holding each user's secrets, a vault no
grant reaches, and a hostile agent whose every function is one attack.

Each attack returns what it managed to reach (file contents, "written", "connected",
or the name of the exception that stopped it), so a test can assert on what was NOT
reachable rather than on the mere absence of an error.
"""

from __future__ import annotations

VICTIM = '''
from dreamer.sdk import Context, function


def _notes(ctx):
    ctx.db.execute("create table if not exists notes (id integer primary key, text text not null)")
    return [row["text"] for row in ctx.db.execute("select text from notes order by id")]


@function
def seed(ctx: Context, text: str) -> int:
    """Keeps a note (only the owner calls this)."""
    _notes(ctx)
    return ctx.db.execute("insert into notes (text) values (?)", (text,)).lastrowid


@function(exported=True)
def read(ctx: Context) -> list:
    """Every note: exported, so a granted agent may read its own user's notes."""
    return _notes(ctx)


@function
def secret(ctx: Context) -> list:
    """The same notes, not exported: no other agent may call it, whatever it holds."""
    return _notes(ctx)
'''

VAULT = '''
from dreamer.sdk import Context, function


@function(exported=True)
def peek(ctx: Context) -> str:
    """Exported, but the hostile agent holds no grant for it."""
    return "vault: the treasure"
'''

HOSTILE = r'''
"""Every function is an attack on the sandbox, the kernel or another user."""

import ctypes
import json
import os
import socket
import sys
import time

from dreamer.sdk import Context, function

BOMB_NAME = b"dreamer-bomb"
MIB = 1024 * 1024


def _outcome(attempt):
    """What an attempt returned, or the name of the exception that stopped it."""
    try:
        return attempt()
    except Exception as exc:  # the class is the observation
        return type(exc).__name__


@function(exported=True)
def ok(ctx: Context) -> str:
    """Answers: the agent still works after an attack."""
    return "fine"


# ---- reaching files and sockets ------------------------------------------------------


@function
def read_files(ctx: Context, paths: list[str]) -> dict:
    """Reads each path (a folder is listed)."""

    def read(path):
        if os.path.isdir(path):
            return "listed:" + ",".join(sorted(os.listdir(path)))
        with open(path, "rb") as f:
            return "read:" + f.read(4096).decode("utf-8", "replace")

    return {path: _outcome(lambda path=path: read(path)) for path in paths}


@function
def hunt(ctx: Context, names: list[str], needles: list[str], skip: list[str]) -> dict:
    """Walks every folder it can see for the kernel's and other users' files."""
    found, seen = [], 0
    for top, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in skip]
        for name in dirs + files:
            seen += 1
            path = os.path.join(top, name)
            if name in names or any(needle in path for needle in needles):
                found.append(path)
    return {"found": found, "seen": seen}


@function
def environs(ctx: Context, needles: list[str]) -> dict:
    """Reads the environment and command line of every process it can see."""
    hits, seen = [], 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        for what in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as f:
                    text = f.read().decode("utf-8", "replace")
            except OSError:
                continue
            seen += 1
            hits += [f"/proc/{pid}/{what} holds {needle}" for needle in needles if needle in text]
    return {"hits": hits, "seen": seen}


@function
def write_files(ctx: Context, paths: list[str]) -> dict:
    """Creates each file, making its folders first where it can."""

    def write(path):
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
        except OSError:
            pass
        with open(path, "x") as f:
            f.write("pwned")
        return "written"

    return {path: _outcome(lambda path=path: write(path)) for path in paths}


@function
def connect(ctx: Context, targets: list) -> dict:
    """Opens each socket: [host, port] over TCP, "/path" or "@abstract" over unix, "dns:name"."""

    def attempt(target):
        if isinstance(target, str) and target.startswith("dns:"):
            return "resolved:" + str(socket.getaddrinfo(target[4:], 80)[0][4])
        if isinstance(target, str):
            sock = socket.socket(socket.AF_UNIX)
            address = "\0" + target[1:] if target.startswith("@") else target
        else:
            sock = socket.socket(socket.AF_INET)
            address = (target[0], target[1])
        sock.settimeout(2)
        try:
            sock.connect(address)
            return "connected"
        finally:
            sock.close()

    return {json.dumps(t): _outcome(lambda t=t: attempt(t)) for t in targets}


# ---- resources ------------------------------------------------------------------------


@function
def bomb(ctx: Context, attempts: int = 2000) -> dict:
    """Forks as often as it may (capped), every child alive at once."""
    r, w = os.pipe()
    made = failed = 0
    children = []
    for _ in range(attempts):
        try:
            pid = os.fork()
        except OSError:
            failed += 1
            continue
        if pid == 0:
            try:
                os.close(w)
                os.read(r, 1)
            finally:
                os._exit(0)
        made += 1
        children.append(pid)
    os.close(w)
    for pid in children:
        os.waitpid(pid, 0)
    os.close(r)
    return {"made": made, "failed": failed}


@function
def spin(ctx: Context, generations: int = 0) -> str:
    """Never returns. With generations, first a classic fork bomb (capped at
    2**generations): every child forks on, leaves the process group, renames itself
    so the test can find it on the host, and sleeps forever."""
    root = os.getpid()
    for _ in range(generations):
        try:
            pid = os.fork()
        except OSError:
            continue
        if pid == 0:
            try:
                os.setsid()
            except OSError:
                pass
            ctypes.CDLL(None).prctl(15, BOMB_NAME, 0, 0, 0)  # PR_SET_NAME
    if os.getpid() != root:
        try:
            while True:
                time.sleep(3600)
        finally:
            os._exit(0)
    while True:
        pass


@function
def allocate(ctx: Context, gb: float = 10) -> int:
    """Asks for gb gigabytes in one piece."""
    return len(bytearray(int(gb * 1024 * MIB)))


@function
def hog(ctx: Context, gb: float = 10, step_mb: int = 128) -> int:
    """Takes memory a step at a time, touching every page, until it holds gb gigabytes."""
    held = []
    while len(held) * step_mb < gb * 1024:
        held.append(bytearray(step_mb * MIB))
    return len(held) * step_mb


@function
def hog_together(ctx: Context, children: int = 3, mb: int = 250) -> dict:
    """Each of `children` processes takes mb megabytes (under the per-process limit);
    how much the worker holds in total once all have tried (the ones still alive)."""
    release_r, release_w = os.pipe()
    pids, filled = [], []
    for _ in range(children):
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(ready_r)
                os.close(release_w)
                block = bytearray(mb * MIB)
                os.write(ready_w, b"1")
                os.read(release_r, 1)
                del block
            finally:
                os._exit(0)
        pids.append(pid)
        os.close(ready_w)
        if os.read(ready_r, 1) == b"1":
            filled.append(pid)
        os.close(ready_r)
    # A child that filled its memory and is gone since (say, to an OOM killer) holds nothing.
    alive = [pid for pid in filled if os.waitpid(pid, os.WNOHANG)[0] == 0]
    os.close(release_w)
    os.close(release_r)
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    return {"held_mb": len(alive) * mb}


@function
def shm_hog(ctx: Context, segments: int = 3, mb: int = 512) -> dict:
    """SysV shared memory: each segment is attached, filled and detached again, so it
    stays in RAM while counting against no process's address space."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    libc.shmdt.argtypes = [ctypes.c_void_p]
    ids, held = [], 0
    try:
        for _ in range(segments):
            shmid = libc.shmget(0, mb * MIB, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
            if shmid < 0:
                break
            ids.append(shmid)
            address = libc.shmat(shmid, None, 0)
            if address in (None, ctypes.c_void_p(-1).value):
                break
            ctypes.memset(address, 1, mb * MIB)
            libc.shmdt(address)
            held += mb
    finally:
        for shmid in ids:
            libc.shmctl(shmid, 0, None)  # IPC_RMID
    return {"held_mb": held}


@function
def big_file(ctx: Context, gb: float = 5, path: str = "/data/big.bin") -> int:
    """Writes one file of gb gigabytes."""
    chunk = b"x" * MIB
    written = 0
    with open(path, "wb") as f:
        while written < gb * 1024 * MIB:
            f.write(chunk)
            written += len(chunk)
    return written


@function
def fill(ctx: Context, folder: str, mb: int = 1536, file_mb: int = 32) -> dict:
    """Fills a folder with files (each under the file size limit) until mb megabytes
    are written or the folder refuses; then deletes them. In a tmpfs, all of it is RAM."""
    written, error, names = 0, None, []
    chunk = b"z" * MIB
    try:
        while written < mb * MIB:
            name = os.path.join(folder, f"fill-{os.getpid()}-{len(names)}")
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            names.append(name)
            try:
                for _ in range(file_mb):
                    written += os.write(fd, chunk)
            finally:
                os.close(fd)
    except OSError as exc:
        error = f"{type(exc).__name__}: {exc.strerror}"
    finally:
        for name in names:
            try:
                os.remove(name)
            except OSError:
                pass
    return {"written_mb": written // MIB, "error": error}


@function
def flood(ctx: Context, mb: int = 25, log_lines: int = 20000) -> str:
    """Prints mb megabytes to stdout, one mb-megabyte line to stderr, and log_lines log lines."""
    line = "x" * 1023 + "\n"
    for _ in range(mb * 1024):
        sys.stdout.write(line)
    sys.stdout.flush()
    sys.stderr.write("y" * (mb * MIB) + "\n")
    sys.stderr.flush()
    for i in range(log_lines):
        ctx.log(f"flood line {i}")
    return "done"


# ---- the protocol channel ---------------------------------------------------------------


def _protocol_fds():
    """The worker's private protocol pipes (read, write), found the way any agent code could:
    the pipes among its descriptors that are not stderr."""
    stderr = os.fstat(2).st_ino
    reader = writer = None
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:") or os.fstat(fd).st_ino == stderr:
                continue
            with open(f"/proc/self/fdinfo/{fd}") as info:
                flags = int(info.read().split("flags:")[1].split()[0], 8)
        except (OSError, IndexError, ValueError):
            continue
        if flags & 3 == os.O_WRONLY:
            writer = fd
        else:
            reader = fd
    if reader is None or writer is None:
        raise RuntimeError("the protocol pipes were not found")
    return reader, writer


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_line(fd):
    line = b""
    while not line.endswith(b"\n"):
        part = os.read(fd, 1)
        if not part:
            return None
        line += part
    return line


@function
def forge(ctx: Context, lines: list[str]) -> list:
    """Writes each line straight onto the protocol channel and reads the kernel's answer."""
    reader, writer = _protocol_fds()
    answers = []
    for line in lines:
        _write_all(writer, line.encode() + b"\n")
        answer = _read_line(reader)
        answers.append(None if answer is None else json.loads(answer))
    return answers


@function
def garbage(ctx: Context, hex: str = "", size: int = 0) -> object:
    """Writes bytes that are no valid message (given as hex, or `size` bytes of x) and
    waits for the kernel's answer, which should never come."""
    reader, writer = _protocol_fds()
    data = bytes.fromhex(hex) if hex else b"x" * size
    _write_all(writer, data + b"\n")
    answer = _read_line(reader)
    return {"answer": None if answer is None else answer.decode("utf-8", "replace")}


# ---- the kernel's grants -----------------------------------------------------------------


@function
def call(ctx: Context, agent: str, function: str, args: dict | None = None) -> object:
    """Calls another agent's function through the kernel; the grants decide."""
    return ctx.call(agent, function, **(args or {}))


@function
def tool(ctx: Context, name: str) -> object:
    """Uses a tool no grant names."""
    return ctx.tools.call(name, {})
'''
