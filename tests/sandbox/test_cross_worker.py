"""Two workers of two users, alive at once: the second finds nothing the first holds.

Worker A (user "me") plants a secret wherever a process can leave one: a file in its
/data, /tmp and /dev/shm, its own memory (and so /proc/PID/mem and environ), a SysV
shared memory segment under a known key, and an abstract unix socket under a known
name. Worker B (user "you") then looks for it every way a sandboxed process could:
other processes in /proc, the files it can reach, the SysV key, the socket name.

The secret reaches each worker on stdin, never in argv or the environment, so it is in
no command line that B could read. This is the acceptance test for any way of starting
workers faster (a fork server shares its parent's memory with every child): it must
pass unchanged on every confining backend.
"""

from __future__ import annotations

import asyncio
import json
import secrets

from sandbox_helpers import Layout, python_argv

from dreamer.kernel.config import Limits
from dreamer.kernel.sandbox import Sandbox, SandboxSpec

SHM_KEY = 0x5EC2E7  # the SysV key A uses and B tries

PLANT = r"""
# planter-marker
import ctypes, os, socket, sys
secret = sys.stdin.readline().strip()
keep = [secret * 4]  # in this process's heap as long as it lives
for folder in ("/data", "/tmp", "/dev/shm"):
    try:
        with open(os.path.join(folder, "secret.txt"), "w") as f:
            f.write(secret)
    except OSError:
        pass  # /dev/shm is read-only where bwrap cannot size it
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shm_id = libc.shmget(SHM_KEY, 4096, 0o1666)  # IPC_CREAT | rw for everyone
if shm_id >= 0:
    address = libc.shmat(shm_id, None, 0)
    if address not in (None, ctypes.c_void_p(-1).value):
        ctypes.memmove(address, secret.encode(), len(secret))
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind("\0dreamer-cross-worker")
listener.listen(1)
print(json.dumps({"pid": os.getpid(), "shm": shm_id >= 0}), flush=True)
sys.stdin.read()  # alive, holding everything, until the test closes stdin
""".replace("SHM_KEY", str(SHM_KEY))

PROBE = r"""
import ctypes, json, os, socket, sys
secret = sys.stdin.readline().strip().encode()
found = []
me = str(os.getpid())
others = []
for entry in os.listdir("/proc"):
    if not entry.isdigit() or entry == me:
        continue
    try:
        with open(f"/proc/{entry}/cmdline", "rb") as f:
            others.append(f.read().decode(errors="replace"))
    except OSError:
        pass
    for name in ("cmdline", "environ", "maps"):
        try:
            with open(f"/proc/{entry}/{name}", "rb") as f:
                if secret in f.read():
                    found.append(f"/proc/{entry}/{name}")
        except OSError:
            pass
    # Its writable memory, wherever the kernel lets this process read it.
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
                    if secret in mem.read(min(end - start, 64 << 20)):
                        found.append(f"/proc/{entry}/mem")
                        break
                except (OSError, ValueError, OverflowError):
                    continue
    except OSError:
        pass
# (The read-only system and runtime folders are the host's own files, the same for everyone.)
for root in ROOTS:
    for folder, dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as f:
                    if secret in f.read(1 << 20):
                        found.append(path)
            except OSError:
                pass
for name in os.listdir("/"):
    path = os.path.join("/", name)
    try:
        if os.path.isfile(path):
            with open(path, "rb") as f:
                if secret in f.read(1 << 20):
                    found.append(path)
    except OSError:
        pass
libc = ctypes.CDLL(None, use_errno=True)
if libc.shmget(SHM_KEY, 0, 0) >= 0:
    found.append("sysv shm key")
try:
    with open("/proc/sysvipc/shm") as f:
        if str(SHM_KEY) in f.read().split():
            found.append("/proc/sysvipc/shm")
except OSError:
    pass
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    client.connect("\0dreamer-cross-worker")
    found.append("abstract socket")
except OSError:
    pass
print(json.dumps({"found": found, "other_commands": others}))
""".replace("SHM_KEY", str(SHM_KEY))
# Every place a process of another sandbox could have written to, had it been shared.
SEARCHED = ("/tmp", "/var/tmp", "/dev/shm", "/data", "/agent", "/mnt", "/run", "/home", "/root", "/opt")


def probe_code(roots: tuple[str, ...] = SEARCHED) -> str:
    return PROBE.replace("ROOTS", repr(roots))


async def _plant_and_probe(
    sandbox: Sandbox, layout: Layout, secret: str, probe: str | None = None
) -> tuple[dict[str, object], dict[str, object]]:
    other_data = layout.home / "users" / "you" / "agents" / "probe" / "data"
    other_data.mkdir(parents=True)

    def spec(data: object, code: str) -> SandboxSpec:
        return SandboxSpec(
            bundle_dir=layout.bundle,
            data_dir=data,  # type: ignore[arg-type]
            env={"DREAMER_AGENT": "probe", "DREAMER_ENTRY": "main"},
            limits=Limits(),
            argv=python_argv("import json\n" + code),
        )

    planter = await sandbox.start(spec(layout.data, PLANT))
    assert planter.stdin is not None and planter.stdout is not None
    try:
        planter.stdin.write(secret.encode() + b"\n")
        await planter.stdin.drain()
        ready = await asyncio.wait_for(planter.stdout.readline(), timeout=60)
        assert ready, "the planting worker ended before it was ready"
        planted = json.loads(ready)
        prober = await sandbox.start(spec(other_data, probe or probe_code()))
        try:
            out, err = await asyncio.wait_for(prober.communicate(secret.encode() + b"\n"), timeout=120)
        finally:
            sandbox.kill(prober)
            await prober.wait()
        assert prober.returncode == 0, err.decode(errors="replace")
        return planted, json.loads(out.decode().strip().splitlines()[-1])
    finally:
        sandbox.kill(planter)
        await planter.wait()


def test_a_worker_finds_nothing_of_another_users_worker(confined: Sandbox, layout: Layout) -> None:
    secret = "dreamer-secret-" + secrets.token_hex(16)
    _, probed = asyncio.run(_plant_and_probe(confined, layout, secret))
    # The secret really was planted where the host can see it, so the probe had something to find.
    assert (layout.data / "secret.txt").read_text() == secret
    assert probed["found"] == [], f"worker B found worker A's secret at {probed['found']}"
    # B sees no process of A's at all (its own pid namespace), so none of the above had a target.
    assert not [c for c in probed["other_commands"] if "planter-marker" in c], probed["other_commands"]
