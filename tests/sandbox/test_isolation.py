"""What the confining backends (bwrap and docker) guarantee: the filesystem, the network,
processes, capabilities. The `none` backend guarantees none of it."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import Layout, live_pids_with, make_spec, reported, run_code

import dreamer.kernel
from dreamer.kernel.sandbox import Sandbox
from dreamer.kernel.sandbox.bwrap import supports_disable_userns
from dreamer.kernel.sandbox.runtime import current_runtime

# Walks a folder inside the sandbox without descending into the runtime's own
# bound folders, reporting every entry found on the way.
WALK = """
import json, os, sys
roots = set(json.loads(sys.argv[1]))
seen = []
for top in ("/root", "/home"):
    for path, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if os.path.join(path, d) not in roots]
        seen += [os.path.join(path, name) for name in dirs + files]
print(json.dumps({"seen": seen, "roots_bound": [r for r in roots if os.path.isdir(r)]}))
"""


def test_agent_folder_is_read_only(confined: Sandbox, layout: Layout) -> None:
    report = reported(
        run_code(
            confined,
            layout,
            """
            import errno, json
            try:
                open("/agent/planted.py", "w").write("evil")
                outcome = "written"
            except OSError as error:
                outcome = errno.errorcode[error.errno]
            print(json.dumps({"outcome": outcome}))
            """,
        )
    )
    assert report == {"outcome": "EROFS"}
    assert not (layout.bundle / "planted.py").exists()


def test_dreamer_home_is_invisible(confined: Sandbox, layout: Layout) -> None:
    report = reported(
        run_code(
            confined,
            layout,
            f"""
            import json, os
            probes = {json.dumps([str(layout.home), str(layout.kernel_db), str(layout.other_agent_secret)])}
            print(json.dumps({{
                "host_paths": [p for p in probes if os.path.exists(p)],
                "up_from_data": os.path.exists("/data/../kernel.db") or os.path.exists("/data/../../kernel.db"),
                "root": sorted(os.listdir("/")),
                "data": sorted(os.listdir("/data")),
            }}))
            """,
        )
    )
    assert report["host_paths"] == []
    assert report["up_from_data"] is False
    assert "kernel.db" not in report["root"]
    assert report["data"] == []


def test_host_homes_and_etc_are_invisible(confined: Sandbox, layout: Layout) -> None:
    runtime = current_runtime()
    roots = [str(root) for root in runtime.roots]
    report = reported(run_code(confined, layout, WALK, args=[json.dumps(roots)]))
    # The runtime itself must be there, or the walk proves nothing.
    assert sorted(report["roots_bound"]) == sorted(roots)
    # Only the folders leading to a bound runtime folder may exist under /root and /home.
    ancestors = {str(parent) for root in runtime.roots for parent in root.parents}
    assert [p for p in report["seen"] if p not in ancestors] == []

    etc = reported(
        run_code(
            confined,
            layout,
            """
            import json, os
            found = [p for p in ("/etc/passwd", "/etc/shadow", "/etc/group") if os.path.exists(p)]
            hostname = open("/etc/hostname").read().strip() if os.path.exists("/etc/hostname") else None
            print(json.dumps({"etc": found, "hostname": hostname}))
            """,
        )
    )
    assert etc["etc"] == []
    # Docker always gives a container its own /etc/hostname; the host's must not show.
    assert etc["hostname"] in (None, "dreamer")
    assert etc["hostname"] != socket.gethostname()


def test_kernel_code_is_invisible_but_the_sdk_is_there(confined: Sandbox, layout: Layout) -> None:
    kernel_dir = str(Path(dreamer.kernel.__file__).resolve().parent)
    report = reported(
        run_code(
            confined,
            layout,
            f"""
            import json, os
            print(json.dumps({{
                "kernel": os.path.exists({kernel_dir!r}),
                "sdk": os.path.isfile("/opt/dreamer/dreamer/sdk/__init__.py"),
                "opt_dreamer": sorted(os.listdir("/opt/dreamer/dreamer")),
            }}))
            """,
        )
    )
    assert report == {"kernel": False, "sdk": True, "opt_dreamer": ["sdk"]}


def test_no_network(confined: Sandbox, layout: Layout) -> None:
    # A listener of our own proves the host side answers, so a refusal means isolation.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        ports = [port]
        try:
            with socket.create_connection(("127.0.0.1", 5432), timeout=2):
                ports.append(5432)  # PostgreSQL answers on the host
        except OSError:
            pass
        report = reported(
            run_code(
                confined,
                layout,
                f"""
                import json, socket
                results = {{}}
                for port in {ports!r}:
                    try:
                        socket.create_connection(("127.0.0.1", port), timeout=3).close()
                        results[port] = "connected"
                    except OSError as error:
                        results[port] = type(error).__name__
                interfaces = [name for _, name in socket.if_nameindex()]
                print(json.dumps({{"results": results, "interfaces": interfaces}}))
                """,
            )
        )
    finally:
        listener.close()
    assert "connected" not in report["results"].values()  # type: ignore[union-attr]
    assert len(report["results"]) == len(ports)  # type: ignore[arg-type]
    assert report["interfaces"] == ["lo"]


def test_processes_of_the_host_are_invisible(confined: Sandbox, layout: Layout) -> None:
    marker = f"dreamer-host-{uuid.uuid4().hex}"
    host = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
    try:
        # Read until the host process shows: under load its command line was once not yet
        # readable the moment Popen returned (CI, stop 36), and this line only checks the test's footing.
        deadline = time.monotonic() + 10
        while live_pids_with(marker) != [host.pid] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert live_pids_with(marker) == [host.pid]
        # The child gets the marker reversed, so its own command line does not hold it.
        report = reported(
            run_code(
                confined,
                layout,
                """
                import json, os, sys
                marker = sys.argv[1][::-1].encode()
                found, count = [], 0
                for pid in os.listdir("/proc"):
                    if pid.isdigit():
                        count += 1
                        try:
                            if marker in open(f"/proc/{pid}/cmdline", "rb").read():
                                found.append(pid)
                        except OSError:
                            pass
                print(json.dumps({"count": count, "found": found}))
                """,
                args=[marker[::-1]],
            )
        )
    finally:
        host.kill()
        host.wait()
    assert report["found"] == []
    # Only the init (bwrap's, or docker's tini) and the sandboxed interpreter live in its pid namespace.
    assert report["count"] == 2


def test_no_capabilities_and_no_nested_user_namespaces(confined: Sandbox, layout: Layout) -> None:
    if confined.name == "bwrap" and not supports_disable_userns(confined.bwrap):  # type: ignore[attr-defined]
        pytest.skip("this bubblewrap cannot disable nested user namespaces")
    report = reported(
        run_code(
            confined,
            layout,
            """
            import ctypes, json
            lines = open("/proc/self/status").read().splitlines()
            status = dict(line.split(":\\t", 1) for line in lines if ":\\t" in line)
            libc = ctypes.CDLL(None, use_errno=True)
            CLONE_NEWUSER = 0x10000000
            print(json.dumps({
                "cap_eff": status["CapEff"].strip(),
                "cap_bnd": status["CapBnd"].strip(),
                "unshare": libc.unshare(CLONE_NEWUSER),
            }))
            """,
        )
    )
    assert report == {"cap_eff": "0000000000000000", "cap_bnd": "0000000000000000", "unshare": -1}


def test_kill_reaches_processes_that_left_the_group(confined: Sandbox, layout: Layout) -> None:
    """A daemonised grandchild (new session) still dies: the pid namespace goes with the sandbox."""
    marker = f"dreamer-escape-{uuid.uuid4().hex}"
    code = f"""
        import subprocess, sys, time
        sleeper = [sys.executable, "-S", "-c", "import time; time.sleep(300)  # {marker}"]
        subprocess.Popen(sleeper, start_new_session=True)
        print("spawned", flush=True)
        time.sleep(300)
        """

    async def scenario() -> tuple[list[int], list[int]]:
        process = await confined.start(make_spec(layout, code))
        try:
            assert process.stdout is not None
            await asyncio.wait_for(process.stdout.readline(), timeout=30)
            before = live_pids_with(marker)
        finally:
            confined.kill(process)
            await process.wait()
        deadline = time.monotonic() + 10
        while (after := live_pids_with(marker)) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return before, after

    before, after = asyncio.run(scenario())
    assert len(before) >= 2
    assert after == []
