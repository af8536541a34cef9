"""The `processes` limit: a fork bomb stays inside its worker, and the rest keeps working.

The bombs are bounded: at most 600 fork attempts, children that sleep and exit,
so even a broken limit leaves the machine standing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import Layout, live_pids_with, make_spec, reported, run_spec

from dreamer.kernel.config import Limits
from dreamer.kernel.sandbox import Sandbox, get_sandbox, pids
from dreamer.kernel.sandbox.bwrap import supports_disable_userns
from dreamer.kernel.sandbox.pids import CgroupMount, ProcessLimit, cgroup_mounts, folder_of, own_cgroups

LIMIT = 32

# Forks until `attempts` tries are spent; children wait on a pipe (so they are all
# alive at once) until the parent, told to by a file, closes it.
BOMB = """
import json, os, sys, time
attempts, go = int(sys.argv[1]), sys.argv[2]
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
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    made += 1
    children.append(pid)
print(json.dumps({"made": made, "failed": failed}), flush=True)
deadline = time.monotonic() + 60
while go and not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.02)
os.close(w)
for pid in children:
    os.waitpid(pid, 0)
"""

# A well-behaved worker that needs a few processes of its own.
FEW = """
import json, subprocess, sys
procs = [subprocess.Popen([sys.executable, "-S", "-c", "pass"]) for _ in range(8)]
print(json.dumps({"ok": [p.wait() for p in procs]}))
"""


@pytest.fixture(params=["bwrap", "forkserver", "none"])
def backend(request: pytest.FixtureRequest) -> Sandbox:
    return get_sandbox(request.param)


def _enforced() -> ProcessLimit:
    found = pids.process_limit()
    if found.cgroups is None:
        pytest.skip(f"no pids cgroup is writable on this host (processes limit kept by: {found.how})")
    return found


def test_a_fork_bomb_is_contained(backend: Sandbox, layout: Layout) -> None:
    _enforced()
    spec = make_spec(layout, BOMB, limits=Limits(processes=LIMIT), args=["600", ""])
    report = reported(asyncio.run(run_spec(backend, spec)))
    assert 0 < report["made"] < LIMIT
    assert report["failed"] >= 600 - LIMIT


def test_others_keep_working_while_a_bomb_holds_every_process(layout: Layout, tmp_path: Path) -> None:
    _enforced()
    bwrap = get_sandbox("bwrap")
    go = layout.data / "go"

    async def scenario() -> tuple[dict[str, object], dict[str, object], list[int]]:
        bomb = await bwrap.start(make_spec(layout, BOMB, limits=Limits(processes=LIMIT), args=["600", "/data/go"]))
        try:
            assert bomb.stdout is not None
            bombed = json.loads(await asyncio.wait_for(bomb.stdout.readline(), 60))
            # Every child of the bomb is alive now; another worker must still start and fork.
            other = reported(await run_spec(bwrap, make_spec(layout, FEW, limits=Limits(processes=LIMIT))))
            # And the kernel's own process can still fork (it is in no worker's cgroup).
            kernel_side = subprocess.run(["true"], check=False).returncode
            go.touch()
            await asyncio.wait_for(bomb.wait(), 60)
        finally:
            bwrap.kill(bomb)
            await bomb.wait()
        return bombed, other, [kernel_side]

    bombed, other, kernel_side = asyncio.run(scenario())
    assert bombed["failed"] > 0
    assert other == {"ok": [0] * 8}
    assert kernel_side == [0]


def test_a_limit_high_enough_lets_a_worker_fork(backend: Sandbox, layout: Layout) -> None:
    _enforced()
    report = reported(asyncio.run(run_spec(backend, make_spec(layout, FEW, limits=Limits(processes=LIMIT)))))
    assert report == {"ok": [0] * 8}


def _wait_for(predicate, bound_s: float = 10.0) -> bool:
    deadline = time.monotonic() + bound_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_the_cgroup_goes_away_with_the_worker(layout: Layout) -> None:
    limit = _enforced()
    assert limit.cgroups is not None
    root = limit.cgroups.root
    seen: list[Path] = []

    async def scenario() -> None:
        process = await get_sandbox("bwrap").start(make_spec(layout, "import sys; sys.stdin.read()"))
        seen.extend(p for p in root.iterdir() if p.is_dir())
        process.stdin.close()  # type: ignore[union-attr]
        await process.wait()
        for _ in range(100):
            if not any(p.exists() for p in seen):
                return
            await asyncio.sleep(0.02)

    asyncio.run(scenario())
    assert seen, "the worker ran in no cgroup of this kernel"
    assert not any(p.exists() for p in seen)


def test_kill_reaches_what_left_the_process_group_unconfined(layout: Layout) -> None:
    """Without a pid namespace, only the cgroup still knows a double-forked, setsid child."""
    _enforced()
    marker = f"dreamer-escape-{uuid.uuid4().hex}"
    none = get_sandbox("none")
    code = f"""
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-S", "-c", "import time; time.sleep(120)  # {marker}"])
            os._exit(0)
        print("ready", flush=True)
        time.sleep(120)
    """

    async def scenario() -> None:
        process = await none.start(make_spec(layout, code))
        assert process.stdout is not None
        await asyncio.wait_for(process.stdout.readline(), 30)
        assert _wait_for(lambda: bool(live_pids_with(marker)))
        none.kill(process)
        await process.wait()

    asyncio.run(scenario())
    assert _wait_for(lambda: not live_pids_with(marker)), "the escaped process survived kill()"


# -- without cgroups: RLIMIT_NPROC inside the sandbox's user namespace ---------------------


def test_without_cgroups_bwrap_sets_nproc_inside_the_sandbox(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pids, "process_limit", lambda: ProcessLimit(None, "/usr/bin/prlimit"))
    spec = make_spec(layout, "pass", limits=Limits(processes=40))
    launch = get_sandbox("bwrap").plan(spec)
    command = launch.argv[launch.argv.index("--") + 1 :]
    assert command[:3] == ["/usr/bin/prlimit", "--nproc=40", "--"]
    assert command[3:] == list(spec.argv or [])
    # Never set on the kernel's side of the namespace: it would count the whole host user.
    assert not any("nproc" in arg for arg in launch.argv[: launch.argv.index("--")])


def test_without_cgroups_the_worker_itself_joins_none(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pids, "process_limit", lambda: ProcessLimit(None, None))
    report = reported(asyncio.run(run_spec(get_sandbox("bwrap"), make_spec(layout, FEW))))
    assert report == {"ok": [0] * 8}


@pytest.fixture
def public_folder() -> Iterator[Path]:
    """A folder another user can read (pytest's own tmp folders are private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="dreamer-nproc-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_nproc_inside_a_user_namespace_counts_only_that_sandbox(public_folder: Path) -> None:
    """The premise of the namespace mode, on this host's Linux: as an unprivileged user,
    RLIMIT_NPROC set inside bwrap holds even when the user already has more processes
    elsewhere than the limit, while the same value set before bwrap breaks the start."""
    bwrap, setpriv, prlimit = shutil.which("bwrap"), shutil.which("setpriv"), shutil.which("prlimit")
    if os.geteuid() != 0 or not (bwrap and setpriv and prlimit and supports_disable_userns(bwrap)):
        pytest.skip("needs root (to become an unprivileged user), setpriv, prlimit and bwrap >= 0.8")
    python = "/usr/bin/python3"
    if not os.path.exists(python):
        pytest.skip("needs the system python3 (the runtime's may live where that user cannot read)")
    folder = public_folder
    (folder / "bomb.py").write_text(BOMB)
    (folder / "bomb.py").chmod(0o644)
    nobody = [setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    sandbox = [
        bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
        "--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev", "--ro-bind", str(folder), "/bomb",
    ]
    for name in ("bin", "lib", "lib64", "sbin"):
        path = Path("/", name)
        if path.is_symlink():
            sandbox += ["--symlink", os.readlink(path), str(path)]
    # Other processes of the same user, more of them than the limit.
    sleepers = [subprocess.Popen([*nobody, "sleep", "60"]) for _ in range(LIMIT + 8)]
    try:
        inside = subprocess.run(
            [*nobody, *sandbox, "--", prlimit, f"--nproc={LIMIT}", "--", python, "-S", "/bomb/bomb.py", "300", ""],
            capture_output=True, text=True, timeout=120, check=False,
        )
        outside = subprocess.run(
            [*nobody, prlimit, f"--nproc={LIMIT}", "--", *sandbox, "--", python, "-S", "/bomb/bomb.py", "300", ""],
            capture_output=True, text=True, timeout=120, check=False,
        )
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()
    if inside.returncode != 0 and "namespace" in inside.stderr.lower():
        pytest.skip(f"unprivileged user namespaces are not allowed here: {inside.stderr.strip()}")
    report = json.loads(inside.stdout.strip().splitlines()[-1])
    assert 0 < report["made"] < LIMIT
    assert outside.returncode != 0


# -- finding the cgroup ----------------------------------------------------------------------

MOUNTINFO = """\
25 30 0:22 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
33 25 0:28 / /sys/fs/cgroup/pids rw,nosuid,nodev - cgroup cgroup rw,pids
34 25 0:29 / /sys/fs/cgroup/memory rw,nosuid,nodev - cgroup cgroup rw,memory
35 25 0:30 /docker/abc /sys/fs/cgroup/unified\\040dir rw,nosuid - cgroup2 cgroup2 rw
"""


def test_cgroup_mounts_and_own_paths_are_read() -> None:
    mounts = cgroup_mounts(MOUNTINFO)
    assert mounts == [
        CgroupMount(1, "/", Path("/sys/fs/cgroup/pids")),
        CgroupMount(2, "/docker/abc", Path("/sys/fs/cgroup/unified dir")),
    ]
    own = own_cgroups("9:name=systemd:/\n8:pids:/user.slice\n4:memory:/x\n0::/docker/abc/kernel\n")
    assert own == {1: "/user.slice", 2: "/docker/abc/kernel"}
    assert folder_of(mounts[0], own[1]) == Path("/sys/fs/cgroup/pids/user.slice")
    assert folder_of(mounts[1], own[2]) == Path("/sys/fs/cgroup/unified dir/kernel")
    assert folder_of(mounts[1], "/elsewhere") is None
    assert folder_of(mounts[0], "/") == Path("/sys/fs/cgroup/pids")
