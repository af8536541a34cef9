"""One worker, cloned from the zygote: two processes, as in bubblewrap's pid namespace.

    zygote ─clone(CLONE_NEW*)→ init (pid 1 of a new pid namespace) ─fork→ worker (pid 2)

The init is the zygote's own child, born in its new namespaces (clone.py): it writes its id
maps, joins the worker's cgroups, makes the cgroup namespace and forks the worker at once.
The worker builds the file system (the init shares its mount namespace, so pivot_root moves
the init's root too), confines itself and only then runs anything of the agent's: an exec of
the kernel's command, or the SDK worker the zygote already imported. Meanwhile the init
confines itself the same way and becomes the reaper (reaper.py), a few bytes of code instead
of a copy of Python: it reaps, and exits with the worker's status, which the zygote reports.

There is no monitor (bwrap's outer process): the zygote waits for the init itself, from
outside the pid namespace, so no process of the worker can see or signal the zygote or
another worker. Each process dies with its parent (PR_SET_PDEATHSIG); both are in the
session the init leads, so the kernel's killpg reaches them, and a SIGKILL of the init alone
ends the namespace, with whatever the worker started in a session of its own.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import random
import resource
import select
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from . import clone, linux, reaper, rootfs

# Made by the clone. The cgroup namespace comes after, from inside: its root is the cgroup the
# init is in when it makes it, which must be the worker's, joined first.
NAMESPACES = (linux.CLONE_NEWUSER | linux.CLONE_NEWNS | linux.CLONE_NEWPID | linux.CLONE_NEWNET
              | linux.CLONE_NEWIPC | linux.CLONE_NEWUTS)
EXIT_SETUP = 70  # the sandbox could not be set up; the reason is on stderr
SDK_ROOT_IN_SANDBOX = "/opt/dreamer"
WORKER_FILE = f"{SDK_ROOT_IN_SANDBOX}/dreamer/sdk/worker.py"


def _fail(where: str, error: BaseException) -> NoReturn:
    try:
        os.write(2, f"dreamer forkserver: {where}: {error}\n".encode("utf-8", "replace"))
    finally:
        os._exit(EXIT_SETUP)


def _status(raw: int) -> int:
    """A child's wait status as an exit code, signals as 128+N (as bwrap and shells report them)."""
    if os.WIFSIGNALED(raw):
        return 128 + os.WTERMSIG(raw)
    return os.WEXITSTATUS(raw) if os.WIFEXITED(raw) else EXIT_SETUP


def _close_all_but(keep: Sequence[int]) -> None:
    """Close every descriptor but `keep` (close_range underneath: one call per gap)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    top = hard if 0 < hard < 1 << 30 else 1 << 30
    low = 0
    for fd in sorted(set(keep)):
        if low < fd:  # closerange(n, n) would be close_range(n, ~0): everything
            os.closerange(low, fd)
        low = fd + 1
    if low < top:
        os.closerange(low, top)


def fork_worker(fds: Sequence[int], context: Mapping[str, Any]) -> int:
    """In the zygote: clone the init of one worker, in its new namespaces, and return its pid."""
    # Read now: in its new user namespace, before the map is written, the child is nobody.
    ids = (os.geteuid(), os.getegid())
    pid = clone.clone(NAMESPACES)
    if pid:
        return pid
    try:
        _enter(fds, context, ids)
    except BaseException as error:  # noqa: BLE001 - a cloned child must never return into the zygote
        _fail("sandbox", error)
    os._exit(EXIT_SETUP)


def _read_request(fd: int) -> dict[str, Any]:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    request = json.loads(b"".join(chunks))
    if not isinstance(request, dict) or request.get("op") != "fork":
        raise OSError("the fork request is not one")
    return request


def _zygote_gone(context: Mapping[str, Any]) -> bool:
    """Whether the zygote exited before the child tied itself to it (getppid() is 0 in a new pid
    namespace, whoever the parent is: the zygote's pidfd says instead)."""
    readable, _, _ = select.select([int(context["zygote_pidfd"])], [], [], 0)
    return bool(readable)


def _enter(fds: Sequence[int], context: Mapping[str, Any], ids: tuple[int, int]) -> NoReturn:
    """The init: what bwrap's monitor and pid 1 did between them, in one process."""
    # The zygote's signal plumbing is not ours: its wakeup descriptor is about to be closed.
    signal.set_wakeup_fd(-1)
    for signum in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(signum, signal.SIG_DFL)
    linux.die_with_parent(signal.SIGKILL)
    if _zygote_gone(context):
        os._exit(EXIT_SETUP)
    os.setsid()
    stdin, stdout, stderr, plan, *mount_fds = fds
    os.dup2(stdin, 0)
    os.dup2(stdout, 1)
    os.dup2(stderr, 2)
    request = _read_request(plan)
    # Nothing of the zygote's (its control socket, its wakeup pipe, its pidfd) reaches the sandbox.
    _close_all_but([0, 1, 2, *mount_fds])
    uid, gid = ids
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1\n")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1\n")
    for procs in request.get("cgroups") or ():
        # Before the worker is forked: the worker's pids and memory cgroups count both of us.
        # The kernel checks a join against the ids the host sees, which the new user namespace
        # kept (mapped one to one), and the host's cgroup namespace is still ours.
        fd = os.open(str(procs), os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)
    linux.unshare(linux.CLONE_NEWCGROUP)
    # The worker is forked before the init does anything more: every page the init writes
    # before this fork and the worker writes again after is held twice while both live.
    worker = os.fork()
    if worker == 0:
        try:
            _worker(request, mount_fds, context)
        except BaseException as error:  # noqa: BLE001
            _fail("worker", error)
        os._exit(EXIT_SETUP)
    _reap(request, mount_fds, worker)


def _reap(request: Mapping[str, Any], mount_fds: Sequence[int], worker: int) -> NoReturn:
    """pid 1 from here on: it only reaps, which needs no privilege. It lives beside the worker,
    with its uid, so it gets what the worker gets: the same limits (bwrap's init inherits them
    from the kernel's preexec step), no capabilities, no_new_privs, the same filter."""
    for fd in mount_fds:
        os.close(fd)
    program = reaper.prepare()
    _lock_down(request)
    # No end of the worker's pipes: the kernel sees EOF when the worker goes. Nothing is opened
    # instead: the worker may still be building the file system, and a /dev/null opened now
    # could be the host's.
    os.closerange(0, 3)
    reaper.become(program, worker)
    while True:  # where there is no reaper program, the same loop in Python
        try:
            pid, raw = os.wait()
        except ChildProcessError:
            os._exit(EXIT_SETUP)
        except InterruptedError:
            continue
        if pid == worker:
            os._exit(_status(raw))


def _set_rlimits(request: Mapping[str, Any]) -> None:
    for kind, value in request["rlimits"]:
        resource.setrlimit(int(kind), (int(value), int(value)))
    nproc = request.get("nproc")
    if nproc is not None:
        # Inside the user namespace RLIMIT_NPROC counts this sandbox alone (kernel/sandbox/pids.py).
        resource.setrlimit(resource.RLIMIT_NPROC, (int(nproc), int(nproc)))


def _lock_down(request: Mapping[str, Any]) -> None:
    """The worker's limits, no capabilities, no_new_privs and its seccomp filter, in that order
    (the filter last: it may forbid the calls before it). The init beside the worker gets the same."""
    _set_rlimits(request)
    linux.drop_capabilities()
    linux.no_new_privs()
    code = request.get("seccomp")
    if code:
        linux.load_seccomp(bytes.fromhex(str(code)))


def _worker(request: Mapping[str, Any], mount_fds: Sequence[int], context: Mapping[str, Any]) -> NoReturn:
    linux.die_with_parent(signal.SIGKILL)
    # Nested user namespaces off (bwrap's --disable-userns): none may be made below this one.
    # The value is this user namespace's own, whichever /proc it is written through; written
    # before the new /proc covers /proc/sys read-only.
    with open("/proc/sys/user/max_user_namespaces", "w") as f:
        f.write("0")
    rootfs.build(request["mounts"], mount_fds)
    linux.loopback_up()
    # The last steps before agent code: limits, no capabilities, no_new_privs, the filter.
    _close_all_but([0, 1, 2])
    _lock_down(request)
    env = {str(k): str(v) for k, v in request["env"].items()}
    os.chdir(str(request["cwd"]))
    argv = request.get("argv")
    if argv:
        os.execvpe(str(argv[0]), [str(a) for a in argv], env)
    _serve_in_place(env, context)


def _serve_in_place(env: Mapping[str, str], context: Mapping[str, Any]) -> NoReturn:
    """The default worker without an exec: the zygote imported it already."""
    # What a fork would otherwise share with its siblings.
    random.seed()
    os.environ.clear()
    os.environ.update(env)
    atexit._clear()
    _rebuild_paths(env.get("PYTHONPATH", ""), list(context["own_path"]))
    sys.argv = [WORKER_FILE]
    from dreamer.sdk import worker  # imported by the zygote: no file is read here

    try:
        code = worker.main()
    except SystemExit as leaving:
        code = leaving.code if isinstance(leaving.code, int) else 1
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _rebuild_paths(pythonpath: str, own_path: Sequence[str]) -> None:
    """sys.path as `python -S -m` would make it here.

    What else `python -S -m` would not have was dropped in the zygote, once (forget_zygote):
    every page a fork touches here is copied, so the fork touches as little as it can.
    """
    stdlib = [p for p in sys.path[1:] if p not in own_path]
    sys.path[:] = [p for p in pythonpath.split(os.pathsep) if p] + stdlib


def forget_zygote(host_root: str) -> None:
    """In the zygote, once it has imported all it will, what no worker may see of the host.

    Its own modules leave sys.modules (the zygote keeps them through its own references), the
    import system's cache of host folders is emptied, and the SDK's modules name /opt/dreamer.

    The zygote imported the SDK from a private folder of the host; in the sandbox the same
    files are at /opt/dreamer, and a module that names a host path would both mislead
    importlib (later imports of SDK submodules) and tell the agent where the host keeps it.
    Done once here rather than in every fork (it was a tenth of a fork's start); the zygote
    imports nothing after this.
    """
    for name in [n for n in sys.modules if n == "dreamer_forkserver" or n.startswith("dreamer_forkserver.")]:
        del sys.modules[name]
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()
    for name, module in list(sys.modules.items()):
        if name == "dreamer" or name.startswith("dreamer."):
            _relocate(module, host_root, SDK_ROOT_IN_SANDBOX)


def _moved(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str) and (value == old or value.startswith(old + "/")):
        return new + value[len(old):]
    return value


def _relocate(module: Any, old: str, new: str) -> None:
    for attr in ("__file__", "__cached__"):
        if hasattr(module, attr):
            setattr(module, attr, _moved(getattr(module, attr), old, new))
    path = getattr(module, "__path__", None)
    if path is not None:
        module.__path__ = [_moved(p, old, new) for p in path]
    spec = getattr(module, "__spec__", None)
    if spec is not None:
        spec.origin = _moved(spec.origin, old, new)
        if spec.submodule_search_locations is not None:
            spec.submodule_search_locations = [_moved(p, old, new) for p in spec.submodule_search_locations]
        if spec.cached:
            spec.cached = _moved(spec.cached, old, new)
    loader = getattr(module, "__loader__", None)
    if loader is not None and isinstance(getattr(loader, "path", None), str):
        loader.path = _moved(loader.path, old, new)
