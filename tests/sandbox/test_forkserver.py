"""The fork server (decision 0050): two SDK workers forked from one zygote share nothing.

test_cross_worker.py runs on this backend too, with commands the fork executes. Here both
workers are what the kernel really starts: the default worker, served by the fork itself
(no exec), so each is a copy of the zygote's memory. Worker A (user "me", agent "alpha")
plants a secret in every place a process can leave one: /data, /tmp and /dev/shm, its
heap, its environment, an abstract unix socket and a SysV shared memory segment. Worker
B (user "you", agent "beta"), forked from the same zygote while A lives, looks for it
every way a sandboxed process could, and finds nothing; nor does the zygote hold it.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import Layout, python_argv, run_spec

from dreamer.kernel.config import Limits
from dreamer.kernel.sandbox import Sandbox, SandboxSpec, get_sandbox
from dreamer.kernel.sandbox.forkserver import ForkServerSandbox
from dreamer.sdk.protocol import encode, request

SHM_KEY = 0x5EC2E8
SOCKET = "\0dreamer-forked-secret"

AGENT = r'''
import ctypes, os, socket
from dreamer.sdk import Context, function

_held = []


def _forked() -> bool:
    # A fork of the zygote still has the zygote's command line: nothing was executed.
    with open("/proc/self/cmdline", "rb") as f:
        return b"dreamer_forkserver.zygote" in f.read()


@function
def plant(ctx: Context, secret: str) -> dict:
    """Leave the secret everywhere a process can."""
    _held.append(secret * 4)
    os.environ["DREAMER_PLANTED"] = secret
    for folder in ("/data", "/tmp", "/dev/shm"):
        with open(os.path.join(folder, "secret.txt"), "w") as f:
            f.write(secret)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shm_id = libc.shmget(SHM_KEY, 4096, 0o1666)
    if shm_id >= 0:
        address = libc.shmat(shm_id, None, 0)
        ctypes.memmove(address, secret.encode(), len(secret))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(SOCKET)
    listener.listen(1)
    _held.append(listener)
    return {"pid": os.getpid(), "forked": _forked(), "shm": shm_id >= 0}


@function
def probe(ctx: Context, secret: str) -> dict:
    """Look for the secret everywhere another sandbox's process could have left it."""
    needle = secret.encode()
    found = []
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or entry == me:
            continue
        for name in ("cmdline", "environ"):
            try:
                with open(f"/proc/{entry}/{name}", "rb") as f:
                    if needle in f.read():
                        found.append(f"/proc/{entry}/{name}")
            except OSError:
                pass
        try:
            with open(f"/proc/{entry}/maps") as f:
                regions = [line.split() for line in f]
            with open(f"/proc/{entry}/mem", "rb") as mem:
                for region in regions:
                    if len(region) < 2 or not region[1].startswith("rw"):
                        continue
                    start, end = (int(x, 16) for x in region[0].split("-"))
                    try:
                        mem.seek(start)
                        if needle in mem.read(min(end - start, 64 << 20)):
                            found.append(f"/proc/{entry}/mem")
                            break
                    except (OSError, ValueError, OverflowError):
                        continue
        except OSError:
            pass
    for root in ("/tmp", "/dev/shm", "/data", "/agent", "/mnt", "/opt", "/run", "/var/tmp"):
        for folder, _, files in os.walk(root):
            for name in files:
                path = os.path.join(folder, name)
                try:
                    with open(path, "rb") as f:
                        if needle in f.read(1 << 20):
                            found.append(path)
                except OSError:
                    pass
    if secret in os.environ.values():
        found.append("os.environ")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.shmget(SHM_KEY, 0, 0) >= 0:
        found.append("sysv shm key")
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(SOCKET)
        found.append("abstract socket")
    except OSError:
        pass
    return {"found": found, "forked": _forked(), "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
'''.replace("SHM_KEY", str(SHM_KEY)).replace("SOCKET", repr(SOCKET))


def _bundle(root: Path, name: str) -> Path:
    bundle = root / "bundles" / name / "1.0.0"
    bundle.mkdir(parents=True)
    (bundle / "agent.yaml").write_text(f"name: {name}\nversion: 1.0.0\nentry: main\n")
    (bundle / "main.py").write_text(AGENT)
    return bundle


async def _call(process: asyncio.subprocess.Process, function: str, args: dict[str, Any], user: str) -> Any:
    assert process.stdin is not None and process.stdout is not None
    params = {"invocation_id": f"{function}-1", "function": function, "args": args, "user": {"id": 1, "name": user}}
    process.stdin.write(encode(request(1, "invoke", params)))
    await process.stdin.drain()
    while True:
        line = await asyncio.wait_for(process.stdout.readline(), timeout=120)
        assert line, "the worker ended without answering"
        message = json.loads(line)
        if "method" in message:
            if "id" in message:  # a syscall: an empty answer will do
                process.stdin.write(encode({"jsonrpc": "2.0", "id": message["id"], "result": None}))
            continue
        assert "error" not in message, message
        return message["result"]["value"]


def _zygote_memory_holds(pid: int, needle: bytes) -> bool:
    with open(f"/proc/{pid}/maps") as f:
        regions = [line.split() for line in f]
    with open(f"/proc/{pid}/mem", "rb") as mem:
        for region in regions:
            if not region[1].startswith("rw"):
                continue
            start, end = (int(x, 16) for x in region[0].split("-"))
            try:
                mem.seek(start)
                if needle in mem.read(end - start):
                    return True
            except (OSError, ValueError, OverflowError):
                continue
    return False


def test_two_forked_sdk_workers_of_two_users_share_nothing(layout: Layout) -> None:
    sandbox = get_sandbox("forkserver")
    assert isinstance(sandbox, ForkServerSandbox)
    secret = "dreamer-forked-secret-" + secrets.token_hex(16)
    alpha, beta = _bundle(layout.home, "alpha"), _bundle(layout.home, "beta")
    mine = layout.home / "users" / "me" / "agents" / "alpha" / "data"
    theirs = layout.home / "users" / "you" / "agents" / "beta" / "data"
    for folder in (mine, theirs):
        folder.mkdir(parents=True)

    def spec(bundle: Path, data: Path, agent: str) -> SandboxSpec:
        return SandboxSpec(bundle, data, {"DREAMER_AGENT": agent, "DREAMER_ENTRY": "main"}, Limits())

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], int]:
        planter = await sandbox.start(spec(alpha, mine, "alpha"))
        try:
            planted = await _call(planter, "plant", {"secret": secret}, "me")
            prober = await sandbox.start(spec(beta, theirs, "beta"))
            try:
                probed = await _call(prober, "probe", {"secret": secret}, "you")
            finally:
                sandbox.kill(prober)
                await prober.wait()
            zygote = sandbox.zygote().process.pid
            return planted, probed, zygote
        finally:
            sandbox.kill(planter)
            await planter.wait()

    try:
        planted, probed, zygote = asyncio.run(scenario())
        # Both were forks served in place, and A really planted where the host can see it.
        assert planted["forked"] is True and probed["forked"] is True
        assert planted["shm"] is True
        assert (mine / "secret.txt").read_text() == secret
        assert probed["found"] == [], f"worker B found worker A's secret at {probed['found']}"
        # B's pid namespace holds its init and itself: A is not even there to look at.
        assert probed["processes"] == [1, 2]
        # The zygote never saw it, nor even the users' folders: it holds no user's data.
        assert not _zygote_memory_holds(zygote, secret.encode())
        assert not _zygote_memory_holds(zygote, str(mine).encode())
    finally:
        sandbox.close()


def test_the_zygote_is_replaced_after_its_forks(layout: Layout) -> None:
    """After `forks_per_zygote` forks the next worker comes from a fresh zygote (fresh hash seed)."""
    sandbox = ForkServerSandbox(forks_per_zygote=1)
    spec = SandboxSpec(layout.bundle, layout.data, {"DREAMER_AGENT": "probe", "DREAMER_ENTRY": "main"}, Limits())

    async def one() -> int:
        process = await sandbox.start(spec)
        assert process.stdin is not None
        process.stdin.write(b'{"jsonrpc": "2.0", "method": "shutdown"}\n')
        await process.stdin.drain()
        await asyncio.wait_for(process.communicate(), timeout=60)
        assert process.returncode == 0
        return sandbox.zygote().process.pid

    try:
        first = asyncio.run(one())
        second = asyncio.run(one())
        assert first != second
    finally:
        sandbox.close()


def test_a_forked_worker_ends_as_an_executed_one_does(layout: Layout) -> None:
    """The exit status the kernel sees is the worker's own, as under bwrap."""
    spec = SandboxSpec(layout.bundle, layout.data, {"DREAMER_AGENT": "probe", "DREAMER_ENTRY": "main"}, Limits())

    async def status(sandbox: Sandbox) -> int | None:
        process = await sandbox.start(spec)
        assert process.stdin is not None
        process.stdin.write(b'{"jsonrpc": "2.0", "method": "shutdown"}\n')
        await process.stdin.drain()
        await asyncio.wait_for(process.communicate(), timeout=60)
        return process.returncode

    forkserver = ForkServerSandbox()
    try:
        assert asyncio.run(status(forkserver)) == asyncio.run(status(get_sandbox("bwrap")))
    finally:
        forkserver.close()


def test_a_granted_folder_swapped_after_the_pin_is_refused(
    layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fork binds a granted folder only if it is still the folder the kernel pinned."""
    from dreamer.kernel.sandbox import Mount
    from dreamer.kernel.sandbox.forkserver import plan

    granted, elsewhere = tmp_path / "granted" / "notes", tmp_path / "elsewhere"
    granted.mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "private.txt").write_text("not granted")
    # As if the folder had been swapped between the kernel's check and the bind: the pinned
    # descriptor names another folder than the path the plan binds.
    monkeypatch.setattr(plan, "pin", lambda mounts: [os.open(elsewhere, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)])
    spec = SandboxSpec(
        layout.bundle, layout.data, {"DREAMER_AGENT": "probe", "DREAMER_ENTRY": "main"}, Limits(),
        argv=python_argv("import os; print(os.listdir('/mnt/notes'))"),
        mounts=[Mount(source=granted, target="/mnt/notes", writable=True)],
    )
    sandbox = ForkServerSandbox()
    try:
        outcome = asyncio.run(run_spec(sandbox, spec))
    finally:
        sandbox.close()
    assert outcome.returncode != 0
    assert "private.txt" not in outcome.stdout
    assert "was replaced" in outcome.stderr


INIT_SEEN = r"""
import json
def status(pid):
    return dict(l.split(":\t", 1) for l in open(f"/proc/{pid}/status").read().splitlines() if ":\t" in l)
init = status(1)
print(json.dumps({"seccomp": init["Seccomp"].strip(), "cap_eff": init["CapEff"].strip(),
                  "cap_bnd": init["CapBnd"].strip(), "no_new_privs": init["NoNewPrivs"].strip(),
                  "same_limits": open("/proc/1/limits").read() == open("/proc/self/limits").read()}))
"""


@pytest.mark.parametrize("backend", ["bwrap", "forkserver"])
def test_the_init_beside_the_worker_is_as_confined_as_the_worker(layout: Layout, backend: str) -> None:
    """pid 1 of the worker's namespace shares its uid (the worker may reach it through /proc/1),
    so it may do no more than the worker: the same filter, no capabilities, the same limits."""
    sandbox = get_sandbox(backend)
    spec = SandboxSpec(layout.bundle, layout.data, {"DREAMER_AGENT": "probe", "DREAMER_ENTRY": "main"}, Limits(),
                       argv=python_argv(INIT_SEEN))
    try:
        outcome = asyncio.run(run_spec(sandbox, spec))
    finally:
        close = getattr(sandbox, "close", None)
        if close is not None:
            close()
    report = json.loads(outcome.stdout.strip().splitlines()[-1])
    assert report == {"seccomp": "2", "cap_eff": "0000000000000000", "cap_bnd": "0000000000000000",
                      "no_new_privs": "1", "same_limits": True}


def test_a_dead_zygote_takes_its_workers_and_is_replaced(layout: Layout) -> None:
    """Killed, the zygote's workers die with it (PR_SET_PDEATHSIG) and report it; the next
    start gets a fresh zygote."""
    import signal

    sandbox = ForkServerSandbox()
    spec = SandboxSpec(layout.bundle, layout.data, {"DREAMER_AGENT": "probe", "DREAMER_ENTRY": "main"}, Limits(),
                       argv=python_argv("import sys; sys.stdin.read()"))

    async def scenario() -> tuple[int | None, int]:
        process = await sandbox.start(spec)
        first = sandbox.zygote().process.pid
        os.kill(first, signal.SIGKILL)
        status = await asyncio.wait_for(process.wait(), timeout=30)
        again = await run_spec(sandbox, SandboxSpec(layout.bundle, layout.data, spec.env, Limits(),
                                                    argv=python_argv("print('{}')")))
        assert again.returncode == 0, again.stderr
        assert sandbox.zygote().process.pid != first
        return status, first

    try:
        status, _ = asyncio.run(scenario())
    finally:
        sandbox.close()
    assert status == -signal.SIGKILL


def test_without_cgroups_the_fork_sets_nproc_inside_the_sandbox(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where bwrap would run prlimit inside the sandbox, the fork sets RLIMIT_NPROC there itself."""
    from dreamer.kernel.sandbox import pids
    from dreamer.kernel.sandbox.pids import ProcessLimit

    monkeypatch.setattr(pids, "process_limit", lambda: ProcessLimit(None, "/usr/bin/prlimit"))
    code = "import json, resource; print(json.dumps(resource.getrlimit(resource.RLIMIT_NPROC)))"
    spec = SandboxSpec(layout.bundle, layout.data, {"DREAMER_AGENT": "probe", "DREAMER_ENTRY": "main"},
                       Limits(processes=40), argv=python_argv(code))
    sandbox = ForkServerSandbox()
    try:
        outcome = asyncio.run(run_spec(sandbox, spec))
    finally:
        sandbox.close()
    assert outcome.returncode == 0, outcome.stderr
    assert json.loads(outcome.stdout.strip().splitlines()[-1]) == [40, 40]


def test_the_pool_starts_the_zygote_ahead_of_the_first_worker() -> None:
    """A kernel's pool gets the zygote ready at start, in the background (decision 0050)."""
    from dreamer.kernel.workers.pool import WorkerPool

    sandbox = ForkServerSandbox()

    async def scenario() -> bool:
        pool = WorkerPool(sandbox)
        pool.start_reaper()
        try:
            for _ in range(600):
                if sandbox._zygote is not None:
                    return True
                await asyncio.sleep(0.1)
            return False
        finally:
            await pool.close()

    try:
        assert asyncio.run(scenario())
    finally:
        sandbox.close()
