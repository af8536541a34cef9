"""What a hostile agent can see from inside its sandbox: not another user's data, not the
kernel's files or environment, not the host's secrets, no network; and what it writes
lands nowhere but its own data folder."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import dreamer.kernel
from dreamer.kernel.sandbox.runtime import current_runtime
from security_world import World


def test_other_users_data_and_the_kernels_files_do_not_exist_inside(world: World) -> None:
    home = world.home
    host_secret = Path("/tmp") / f"{world.marker}-host-secret"
    host_secret.write_text("a file on the host's /tmp")
    try:
        hidden = {
            "the other user's victim database": world.data_dir("other", "victim") / "agent.db",
            "the other user's data folder": world.data_dir("other", "victim"),
            "this user's victim database (another agent's)": world.data_dir("me", "victim") / "agent.db",
            "the kernel's database": home / "kernel.db",
            "the credentials file": home / "credentials",
            "the kernel's home": home,
            "the victim's bundle": world.bundle_dir("victim") / "agent.yaml",
            "the kernel's source": Path(dreamer.kernel.__file__).parent / "config.py",
            "the host's /etc/shadow": Path("/etc/shadow"),
            "the host's /tmp": host_secret,
            "the docker engine": Path("/var/run/docker.sock"),
            "the host's root through /proc/1/root": Path("/proc/1/root/etc/shadow"),
            "the kernel's process": Path(f"/proc/{world.kernel.process.pid}/environ"),
        }
        # Each exists on the host (else the test would prove nothing), none inside.
        for what, path in hidden.items():
            if not path.is_relative_to("/proc") and path != Path("/var/run/docker.sock"):
                assert path.exists(), f"{what} ({path}) is missing on the host"
        seen = world.ok("read_files", paths=[str(p) for p in hidden.values()])
        reached = {what: seen[str(path)] for what, path in hidden.items() if seen[str(path)] != "FileNotFoundError"}
        if world.kernel.process.pid < 64:  # a pid that small may name a process of the sandbox's own
            reached.pop("the kernel's process", None)
        assert reached == {}, f"visible inside the sandbox: {reached}"
    finally:
        host_secret.unlink()


def test_root_holds_nothing_but_the_python_runtime(world: World) -> None:
    listed = world.ok("read_files", paths=["/root"])["/root"]
    if listed == "FileNotFoundError":
        return
    assert listed.startswith("listed:"), listed
    roots = current_runtime().roots
    for name in filter(None, listed.removeprefix("listed:").split(",")):
        # Only folders on the way to the bound interpreter (a pyenv under /root, say).
        assert any(Path(root).is_relative_to(Path("/root", name)) for root in roots), f"/root/{name} is visible"


def test_a_walk_of_everything_visible_finds_no_kernel_or_user_files(world: World) -> None:
    found = world.ok(
        "hunt",
        # agent.yaml: the agent's own bundle has one, which shows the walk does find names.
        names=["agent.yaml", "kernel.db", "kernel.db-wal", "credentials", "agent.db", "test-kernel.log", "kernel.pid"],
        needles=[str(world.home), world.marker, "/users/other/"],
        # Its own data, the kernel-made pseudo filesystems, and the read-only system and
        # runtime folders the sandbox binds on purpose (too large to walk within the timeout).
        skip=["/data", "/proc", "/sys", "/dev", "/usr", *map(str, current_runtime().roots)],
    )
    assert found["found"] == ["/agent/agent.yaml"]


def test_no_process_inside_holds_the_kernels_environment_or_tokens(world: World) -> None:
    needles = [world.canary, "DREAMER_HOME=", world.kernel.token, world.other_token]
    seen = world.ok("environs", needles=needles)
    assert seen["seen"] >= 2  # at least the worker's own environ and cmdline
    assert seen["hits"] == []
    own = world.ok("read_files", paths=["/proc/self/environ", "/proc/1/environ"])
    assert not any(world.canary in text for text in own.values())


def test_writes_outside_data_land_nowhere_on_the_host(world: World) -> None:
    m = world.marker
    home = world.home
    inside = {
        "/agent": f"/agent/{m}",
        "/usr": f"/usr/{m}",
        "/opt/dreamer": f"/opt/dreamer/dreamer/sdk/{m}",
        "/etc": f"/etc/{m}",
        "/": f"/{m}",
        "/dev": f"/dev/{m}",
        "/proc": f"/proc/{m}",
        "/tmp": f"/tmp/{m}",
        "home": str(home / m),
        "credentials": str(home / "credentials"),
        "other user's data": str(world.data_dir("other", "victim") / m),
        "bundle": str(world.bundle_dir("hostile") / m),
        "runtime": str(Path(current_runtime().python).parent / m),
        "/data": f"/data/{m}",
    }
    done = world.ok("write_files", paths=list(inside.values()))
    # Read-only binds and the read-only root refuse; the rest (the kernel's home lies
    # under /tmp in these tests) may succeed only inside the sandbox's own tmpfs.
    for what in ("/agent", "/usr", "/opt/dreamer", "runtime", "/", "/etc", "/proc"):
        assert done[inside[what]] != "written", f"the worker could write into {what}"
    assert done[f"/data/{m}"] == "written", done
    # Nothing of it reached the host, except the agent's own data folder.
    landed = [str(p) for p in (Path(f"/{m}"), Path(f"/usr/{m}"), Path(f"/etc/{m}"), Path(f"/tmp/{m}"),
                               Path(f"/dev/{m}"), home / m, world.data_dir("other", "victim") / m,
                               world.bundle_dir("hostile") / m, Path(current_runtime().python).parent / m)
              if p.exists()]
    assert landed == []
    assert (world.data_dir("me", "hostile") / m).read_text() == "pwned"
    # The credentials file is the kernel's, unchanged.
    assert json.loads((home / "credentials").read_text())["token"] == world.kernel.token


def test_tmp_is_the_workers_own_and_gone_with_it(world: World) -> None:
    """/tmp is a private tmpfs: not the host's, and not left for the next worker."""
    path = f"/tmp/{world.marker}-private"
    assert world.ok("write_files", paths=[path])[path] == "written"
    assert world.ok("read_files", paths=[path])[path] == "read:pwned"
    assert not Path(path).exists()
    # Stop this worker (a line that is no message does it); the next one starts clean.
    assert world.fail("garbage", hex=b"not a message".hex())["code"] == "protocol_error"
    assert world.ok("read_files", paths=[path])[path] == "FileNotFoundError"


def _host_abstract_socket() -> str | None:
    """An abstract unix socket some host process listens on, if any."""
    try:
        lines = Path("/proc/net/unix").read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if len(parts) >= 8 and parts[7].startswith("@") and parts[5] == "01":  # 01: listening
            return parts[7]
    return None


def _answers(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError:
        return False
    return True


def test_no_network_not_even_the_hosts_loopback(world: World) -> None:
    targets: list[object] = [
        ["127.0.0.1", world.kernel.port],  # the kernel's own API
        ["127.0.0.1", 5432],  # PostgreSQL
        ["1.1.1.1", 53],
        "dns:example.com",
        "/var/run/docker.sock",
        "/var/run/postgresql/.s.PGSQL.5432",
    ]
    abstract = _host_abstract_socket()
    if abstract is not None:
        targets.append(abstract)
    assert _answers("127.0.0.1", world.kernel.port), "the kernel does not answer on the host either"
    opened = world.ok("connect", targets=targets)
    reached = {target: how for target, how in opened.items() if how == "connected" or how.startswith("resolved:")}
    assert reached == {}, f"the sandbox reached {reached}"
    # Refused at once by the sandbox's own loopback: there is no way out, not a slow one.
    assert opened[json.dumps(["127.0.0.1", world.kernel.port])] == "ConnectionRefusedError"
