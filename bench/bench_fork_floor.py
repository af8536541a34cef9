"""What a fork server could reach: the prototype, kept for the decision record.

The production backend is kernel/sandbox/forkserver/ (DREAMER_SANDBOX=forkserver), measured
beside bwrap by `bench/bench_worker_start.py --sandbox bwrap,forkserver`.

A parent imports the SDK once (`dreamer.sdk.worker`, and so pydantic) and freezes its
objects (gc.freeze, so collections do not write to the shared pages). Each worker is a
fork of it that enters a sandbox of its own before any agent code is imported:

  unshare(user, mount, pid, net, ipc, uts) → uid/gid map → fork (pid 1 of its pid namespace)
  → private mounts: a tmpfs root with /usr, the runtime, the SDK, /agent (ro) and /data
    (rw) bound in, bwrap's six devices, its own /proc and /tmp, pivot_root, the old root unmounted
  → rlimits (kernel/sandbox/rlimits.py) → every capability dropped, no_new_privs
  → the kernel's seccomp filter (kernel/sandbox/seccomp.py) → random reseeded
  → the worker's own environment and cwd → import the agent → serve.

It measures fork to the answer of a first `invoke`, beside a real bwrap worker started
the usual way, and the PSS/USS of idle forked workers. It needs root or unprivileged user
namespaces; it is a measurement of the floor, and does not check every property the
bwrap backend keeps (docs/ARCHITECTURE.md, "Worker start: fork server").

    .venv/bin/python bench/bench_fork_floor.py --runs 20
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import random
import resource
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from dreamer.kernel.config import Limits
from dreamer.kernel.sandbox.base import worker_env
from dreamer.kernel.sandbox.rlimits import rlimit_table
from dreamer.kernel.sandbox.runtime import current_runtime
from dreamer.kernel.sandbox.seccomp import program
from dreamer.kernel.workers.procmem import process_memory
from dreamer.sdk.protocol import encode, request

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 4096, 16384, 1 << 18
MS_REMOUNT = 32
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, PR_CAPBSET_DROP = 1, 38, 22, 24
SECCOMP_MODE_FILTER = 2
SYS_PIVOT_ROOT = 155  # x86_64
SYS_CAPSET = 126  # x86_64

libc = ctypes.CDLL(None, use_errno=True)


def check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = [s.encode() if s is not None else None for s in (source, target, fstype, data)]
    check(libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {target}")


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_seccomp(code: bytes) -> None:
    buffer = ctypes.create_string_buffer(code, len(code))
    prog = SockFprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0), "seccomp")


def drop_capabilities() -> None:
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the last capability: fine
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: all zero (two words each)
    check(libc.syscall(SYS_CAPSET, header, data), "capset")
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def bind(source: str, target: str, root: str, writable: bool = False) -> None:
    inside = root + target
    if os.path.isdir(source):
        os.makedirs(inside, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(inside), exist_ok=True)
        open(inside, "a").close()
    mount(source, inside, None, MS_BIND | MS_REC)
    if not writable:
        mount(None, inside, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_REC)


def enter_sandbox(
    bundle: Path, data: Path, scratch: str, limits: Limits, seccomp_code: bytes | None
) -> None:
    """In the forked child: everything bwrap does, in order, before any agent code."""
    uid, gid = os.geteuid(), os.getegid()
    check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS),
          "unshare")
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1\n")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1\n")
    pid = os.fork()  # the pid namespace applies to children: this one is its pid 1
    if pid:
        # The outer child only waits and passes the status on (bwrap's monitor does the same).
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=0755")
    runtime = current_runtime()
    bind("/usr", "/usr", scratch)
    for name in ("bin", "sbin", "lib", "lib64"):
        path = Path("/", name)
        if path.is_symlink():
            os.symlink(os.readlink(path), scratch + "/" + name)
    for root in runtime.roots:
        bind(str(root), str(root), scratch)
    bind(str(runtime.sdk_dir), "/opt/dreamer/dreamer/sdk", scratch)
    bind(str(bundle), "/agent", scratch)
    bind(str(data), "/data", scratch, writable=True)
    for device in ("null", "zero", "full", "random", "urandom", "tty"):
        bind(f"/dev/{device}", f"/dev/{device}", scratch, writable=True)
    os.makedirs(scratch + "/proc")
    mount("proc", scratch + "/proc", "proc", MS_NOSUID | MS_NODEV)
    os.makedirs(scratch + "/tmp")
    mount("tmpfs", scratch + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m")
    os.makedirs(scratch + "/old")
    check(libc.syscall(SYS_PIVOT_ROOT, scratch.encode(), (scratch + "/old").encode()), "pivot_root")
    os.chdir("/")
    check(libc.umount2(b"/old", MNT_DETACH), "umount old root")
    os.rmdir("/old")
    mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    for kind, value in rlimit_table(limits):
        resource.setrlimit(kind, (value, value))
    drop_capabilities()
    if seccomp_code is not None:
        load_seccomp(seccomp_code)
    random.seed()  # the parent's Mersenne state is every child's: reseed from the kernel


def fork_worker(bundle: Path, data: Path, entry: str, limits: Limits, seccomp_code: bytes | None,
                scratch: str) -> tuple[int, int, int]:
    """Fork a worker; return (pid, write fd, read fd) of its protocol pipes."""
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            os.setsid()
            os.dup2(to_child_r, 0)
            os.dup2(from_child_w, 1)
            # Nothing of the parent's but the two protocol ends and stderr survives.
            os.closerange(3, 65536)
            enter_sandbox(bundle, data, scratch, limits, seccomp_code)
            env = worker_env(agent_dir="/agent", data_dir="/data", pythonpath=["/opt/dreamer"],
                             extra={"DREAMER_AGENT": "grocery", "DREAMER_ENTRY": entry})
            os.environ.clear()
            os.environ.update(env)
            os.chdir("/data")
            from dreamer.sdk import worker

            os._exit(worker.main())
        except BaseException as error:  # noqa: BLE001 - report and leave, never return into the parent's code
            os.write(2, f"fork worker: {type(error).__name__}: {error}\n".encode())
            os._exit(70)
    os.close(to_child_r)
    os.close(from_child_w)
    return pid, to_child_w, from_child_r


def read_line(fd: int) -> bytes:
    chunks = b""
    while not chunks.endswith(b"\n"):
        part = os.read(fd, 65536)
        if not part:
            raise RuntimeError("the forked worker ended without answering")
        chunks += part
    return chunks


INVOKE = {"invocation_id": "bench", "function": "list_items", "args": {}, "user": {"id": 1, "name": "bench"}}


def first_answer(bundle: Path, data: Path, entry: str, limits: Limits, code: bytes | None,
                 scratch: str) -> tuple[float, int, int, int]:
    t = time.perf_counter()
    pid, w, r = fork_worker(bundle, data, entry, limits, code, scratch)
    os.write(w, encode(request(1, "invoke", INVOKE)))
    answer = json.loads(read_line(r))
    elapsed = time.perf_counter() - t
    if "error" in answer:
        raise RuntimeError(f"the forked worker answered with an error: {answer['error']}")
    return elapsed, pid, w, r


def stop(pid: int, w: int, r: int) -> None:
    os.close(w)
    os.close(r)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    while True:  # the outer child (the monitor) and whatever else is left of the group
        try:
            os.waitpid(-pid, 0)
        except ChildProcessError:
            return


def bwrap_first_answer(bundle: Path, data: Path, entry: str, limits: Limits) -> float:
    """A worker started the way the kernel starts one today, to its first answer."""
    import asyncio

    from bench_worker_start import first_answer as started

    from dreamer.kernel.sandbox.base import SandboxSpec
    from dreamer.kernel.sandbox.select import get_sandbox

    async def once() -> float:
        sandbox = get_sandbox("bwrap")
        spec = SandboxSpec(bundle_dir=bundle, data_dir=data, limits=limits,
                           env={"DREAMER_AGENT": "grocery", "DREAMER_ENTRY": entry})
        elapsed, process = await started(sandbox, spec)
        sandbox.kill(process)
        await process.wait()
        return elapsed

    return asyncio.run(once())


def worker_pid(group: int) -> int | None:
    """The worker interpreter of a process group: the member that is not the group's leader."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == group:
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            return int(entry)
    return None


def warm_sdk() -> None:
    """Run the SDK's own first-use paths once in the zygote, on a function of its own.

    pydantic builds much of itself lazily on the first model; done here, every forked
    worker starts with it built. Trusted code only, and the registry is emptied after,
    so a worker serves nothing but what its own agent defines.
    """
    from dreamer.sdk import REGISTRY, Context, function

    @function
    def warmup(ctx: Context, text: str, count: int = 1, names: list[str] | None = None) -> dict[str, object]:
        """Exercise argument validation and result serialisation once."""
        return {"text": text, "count": count, "names": names or []}

    entry = REGISTRY.get("warmup")
    assert entry is not None
    entry.result.dump({"text": "a", "count": 1, "names": []}, "warmup")
    entry.validate({"text": "a", "names": ["b"]})
    REGISTRY.clear()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--keep", type=int, default=5)
    parser.add_argument("--beside", action="store_true", help="also start bwrap workers, interleaved")
    parser.add_argument("--no-warm-sdk", dest="warm_sdk", action="store_false",
                        help="do not run the SDK's first-use paths in the zygote")
    args = parser.parse_args()
    from dreamer.agents.bundles import starter_bundles

    import dreamer.sdk.worker  # noqa: F401 - the zygote's one import of the SDK

    limits = Limits()
    code = program()
    current_runtime()  # found once, in the zygote (it is cached)
    report: dict[str, object] = {"load_average": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="dreamer-fork-") as tmp:
        bundle = Path(tmp, "bundle")
        shutil.copytree(next(p for p in starter_bundles() if p.name == "grocery"), bundle)
        import yaml

        entry = yaml.safe_load((bundle / "agent.yaml").read_text())["entry"]
        scratch = tempfile.mkdtemp(prefix="root-", dir=tmp)
        if args.warm_sdk:
            warm_sdk()
        gc.collect()
        gc.freeze()  # keep the collector from writing to every shared object in every child
        # The first call of the day, not the first call ever: agent.db exists (creating it
        # is fsyncs, not start-up). One unmeasured worker makes it; every run gets a copy.
        template = Path(tmp, "data-template")
        template.mkdir()
        _, pid, w, r = first_answer(bundle, template, entry, limits, code, scratch)
        stop(pid, w, r)
        times, alive, bwrap_times = [], [], []
        for n in range(args.runs):
            data = Path(tmp, f"data{n}")
            shutil.copytree(template, data)
            elapsed, pid, w, r = first_answer(bundle, data, entry, limits, code, scratch)
            times.append(elapsed)
            if args.beside:
                # The same worker started the usual way (bwrap, exec, imports), interleaved: same load.
                bwrap_times.append(bwrap_first_answer(bundle, data, entry, limits))
            if len(alive) < args.keep:
                alive.append((pid, w, r))
            else:
                stop(pid, w, r)
        time.sleep(0.5)
        own = [m for m in (process_memory(g) for g in (worker_pid(p) for p, _, _ in alive) if g) if m]
        outer = [m for m in (process_memory(p) for p, _, _ in alive) if m]
        zygote = process_memory(os.getpid())
        for pid, w, r in alive:
            stop(pid, w, r)
    ordered = sorted(times)
    report["fork_first_answer"] = {"p50_ms": round(statistics.median(times) * 1000, 2),
                                   "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))] * 1000, 2),
                                   "n": len(times)}

    def med(values: list[int]) -> float | None:
        return round(statistics.median(values) / 1024, 2) if values else None

    if bwrap_times:
        report["bwrap_first_answer"] = {"p50_ms": round(statistics.median(bwrap_times) * 1000, 2),
                                        "n": len(bwrap_times)}
        report["ratio_fork_to_bwrap"] = round(statistics.median(times) / statistics.median(bwrap_times), 3)
    report["idle_forked_worker"] = {
        "workers": len(own),
        "rss_mb": med([m.rss_kb for m in own]),
        "pss_mb": med([m.pss_kb for m in own]),
        "uss_mb": med([m.uss_kb for m in own]),
        "monitor_uss_mb": med([m.uss_kb for m in outer]),
        "zygote_pss_mb": round(zygote.pss_kb / 1024, 2) if zygote else None,
    }
    report["load_average_after"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    sys.exit(main())
