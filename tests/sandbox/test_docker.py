"""What only the docker backend adds: a read-only root, cgroup limits, container
lifecycle (labels, removal on kill, orphans), the locally made image, and the
refusals when no engine answers. The shared behaviour and isolation suites run on
docker too (conftest's `sandbox` and `confined` fixtures)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from sandbox_helpers import Layout, make_spec, python_argv, reported, run_code, run_spec

from dreamer.kernel.config import Limits
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox import Mount, SandboxSpec, get_sandbox
from dreamer.kernel.sandbox.docker import (
    LABEL_AGENT,
    LABEL_OWNER,
    LABEL_USER,
    DockerSandbox,
    connect,
    container_user,
    reap_orphans,
)
from dreamer.kernel.sandbox.dockerimage import MOUNT_POINTS, ensure_image, root_tarball, system_layout
from dreamer.kernel.sandbox.select import available_backends

NOWHERE = "unix:///nonexistent/dreamer-test/docker.sock"


def _containers(client: docker.DockerClient, name: str) -> list[str]:
    # Low-level listing: the high-level one fails on a container removed while it looks.
    return [c["Names"][0].lstrip("/") for c in client.api.containers(all=True, filters={"name": f"^{name}$"})]


def _wait_removed(client: docker.DockerClient, name: str, bound_s: float = 15.0) -> list[str]:
    deadline = time.monotonic() + bound_s
    while (left := _containers(client, name)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


# -- without an engine ------------------------------------------------------------------


def test_no_engine_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NOWHERE)
    with pytest.raises(DreamerError) as caught:
        get_sandbox("docker")
    assert caught.value.code == "sandbox_unavailable"
    assert caught.value.message == (
        f"no Docker engine answers at {NOWHERE}; start dockerd or choose DREAMER_SANDBOX=bwrap"
    )


def test_doctor_probe_says_why_docker_does_not_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NOWHERE)
    statuses = {s["name"]: s for s in asyncio.run(available_backends())}
    assert list(statuses) == ["bwrap", "docker", "none"]
    assert statuses["docker"]["ok"] is False
    assert NOWHERE in statuses["docker"]["reason"]
    assert statuses["bwrap"] == {"name": "bwrap", "ok": True, "reason": "works"}
    assert statuses["none"]["ok"] is True and "unconfined" in statuses["none"]["reason"]


# -- with an engine ---------------------------------------------------------------------


def test_known_name(docker_sandbox: DockerSandbox) -> None:
    assert get_sandbox("docker").name == "docker"


def test_doctor_probe_starts_a_docker_worker(docker_sandbox: DockerSandbox) -> None:
    statuses = {s["name"]: s for s in asyncio.run(available_backends(active=docker_sandbox))}
    assert statuses["docker"] == {"name": "docker", "ok": True, "reason": "works"}


def test_root_is_read_only(docker_sandbox: DockerSandbox, layout: Layout) -> None:
    report = reported(
        run_code(
            docker_sandbox,
            layout,
            """
            import errno, json
            outcome = {}
            for path in ["/planted", "/usr/planted", "/etc/planted", "/opt/planted", "/agent/planted", "/tmp/ok"]:
                try:
                    open(path, "w").write("x")
                    outcome[path] = "written"
                except OSError as error:
                    outcome[path] = errno.errorcode[error.errno]
            print(json.dumps(outcome))
            """,
        )
    )
    assert report == {
        "/planted": "EROFS",
        "/usr/planted": "EROFS",
        "/etc/planted": "EROFS",
        "/opt/planted": "EROFS",
        "/agent/planted": "EROFS",
        "/tmp/ok": "written",
    }


def test_container_is_locked_down_and_labelled(docker_sandbox: DockerSandbox, layout: Layout) -> None:
    """What the engine was told, read back from the running container."""

    async def scenario() -> dict[str, object]:
        spec = make_spec(layout, "import time; print('up', flush=True); time.sleep(60)", limits=Limits(address_space_mb=300))
        process = await docker_sandbox.start(spec)
        try:
            assert process.stdout is not None
            await asyncio.wait_for(process.stdout.readline(), timeout=30)
            name = docker_sandbox.container_name(process)
            assert name is not None
            return docker_sandbox.client.containers.get(name).attrs
        finally:
            docker_sandbox.kill(process)
            await process.wait()

    attrs = asyncio.run(scenario())
    host = attrs["HostConfig"]  # type: ignore[index]
    config = attrs["Config"]  # type: ignore[index]
    assert host["NetworkMode"] == "none"
    assert host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["ReadonlyRootfs"] is True
    assert host["PidsLimit"] == Limits().processes
    assert host["Memory"] == host["MemorySwap"] == 300 * 1024 * 1024
    assert host["LogConfig"]["Type"] == "none"
    assert host["AutoRemove"] is True
    assert config["User"] == f"{os.getuid()}:{os.getgid()}"
    assert config["Image"] == docker_sandbox.image
    labels = config["Labels"]
    assert labels[LABEL_USER] == "me"
    assert labels[LABEL_AGENT] == "probe"
    assert labels[LABEL_OWNER] == docker_sandbox.owner


def test_kill_removes_the_container(docker_sandbox: DockerSandbox, layout: Layout) -> None:
    async def scenario() -> tuple[str, list[str]]:
        process = await docker_sandbox.start(make_spec(layout, "import time; print('up', flush=True); time.sleep(300)"))
        name = docker_sandbox.container_name(process)
        assert name is not None
        try:
            assert process.stdout is not None
            await asyncio.wait_for(process.stdout.readline(), timeout=30)
            running = _containers(docker_sandbox.client, name)
        finally:
            docker_sandbox.kill(process)
            await process.wait()
        return name, running

    name, running = asyncio.run(scenario())
    assert running == [name]
    assert _wait_removed(docker_sandbox.client, name) == []


def test_a_finished_worker_leaves_no_container(docker_sandbox: DockerSandbox, layout: Layout) -> None:
    async def scenario() -> str:
        process = await docker_sandbox.start(make_spec(layout, "print('bye')"))
        name = docker_sandbox.container_name(process)
        assert name is not None
        await asyncio.wait_for(process.communicate(), timeout=30)
        return name

    assert _wait_removed(docker_sandbox.client, asyncio.run(scenario())) == []


def test_pids_limit_stops_a_fork_bomb(docker_sandbox: DockerSandbox, layout: Layout) -> None:
    report = reported(
        run_code(
            docker_sandbox,
            layout,
                """
            import errno, json, os, time
            born, outcome = 0, "unbounded"
            for _ in range(200):
                try:
                    pid = os.fork()
                except OSError as error:
                    outcome = errno.errorcode[error.errno]
                    break
                if pid == 0:
                    time.sleep(60)
                    os._exit(0)
                born += 1
            print(json.dumps({"born": born, "outcome": outcome}))
            """,
            limits=Limits(processes=24),
        )
    )
    assert report["outcome"] == "EAGAIN"
    # tini and the forking interpreter count too.
    assert isinstance(report["born"], int) and report["born"] <= 22


def test_memory_limit_bounds_the_container_as_a_whole(docker_sandbox: DockerSandbox, layout: Layout) -> None:
    """Each child stays under its own address-space limit; together they exceed the cgroup's."""
    report = reported(
        run_code(
            docker_sandbox,
            layout,
            """
            import json, subprocess, sys, time
            hold = "import sys, time; block = b'x' * (100 * 1024 * 1024); print('held', flush=True); time.sleep(60)"
            children = [subprocess.Popen([sys.executable, "-S", "-c", hold], stdout=subprocess.PIPE) for _ in range(3)]
            said = [child.stdout.readline().decode().strip() for child in children]
            time.sleep(0.5)
            codes = [child.poll() for child in children]
            for child in children:
                child.kill()
            print(json.dumps({"said": said, "codes": codes}))
            """,
            limits=Limits(address_space_mb=256),
        )
    )
    # The kernel's OOM killer took at least one child (SIGKILL), which bwrap alone would not do.
    assert -9 in report["codes"], report  # type: ignore[operator]


def test_granted_folders_are_bound_as_granted(docker_sandbox: DockerSandbox, layout: Layout, tmp_path: Path) -> None:
    # A comma and a colon in the path: docker's -v could not say it, --mount must quote it.
    notes = tmp_path / "notes, mine:2024"
    notes.mkdir()
    (notes / "a.txt").write_text("granted read-only")
    work = tmp_path / "work"
    work.mkdir()
    code = """
        import errno, json, os
        read = open("/mnt/notes/a.txt").read()
        try:
            open("/mnt/notes/planted", "w").write("x")
            ro = "written"
        except OSError as error:
            ro = errno.errorcode[error.errno]
        open("/mnt/work/b.txt", "w").write("from the agent")
        print(json.dumps({"read": read, "ro": ro, "mounts": sorted(json.loads(os.environ["DREAMER_MOUNTS"]))}))
        """
    spec = SandboxSpec(
        bundle_dir=layout.bundle,
        data_dir=layout.data,
        env={"DREAMER_AGENT": "probe"},
        limits=Limits(),
        argv=python_argv(code),
        mounts=[Mount(notes, "/mnt/notes"), Mount(work, "/mnt/work", writable=True)],
    )
    report = reported(asyncio.run(run_spec(docker_sandbox, spec)))
    assert report == {"read": "granted read-only", "ro": "EROFS", "mounts": ["/mnt/notes", "/mnt/work"]}
    assert not (notes / "planted").exists()
    written = work / "b.txt"
    assert written.read_text() == "from the agent"
    # The worker runs as the kernel's own user: its files belong to it on the host.
    assert (written.stat().st_uid, written.stat().st_gid) == (os.getuid(), os.getgid())


@pytest.mark.parametrize("target", ["/data", "/usr/lib/x", "mnt/x", "/mnt/../etc", "/mnt/a/b"])
def test_mounts_over_the_sandbox_are_refused(
    docker_sandbox: DockerSandbox, layout: Layout, tmp_path: Path, target: str
) -> None:
    spec = SandboxSpec(layout.bundle, layout.data, {}, Limits(), ["true"], mounts=[Mount(tmp_path, target, True)])
    with pytest.raises(DreamerError) as caught:
        docker_sandbox.plan(spec)
    assert "directly in /mnt" in caught.value.message


def test_a_granted_folder_swapped_for_a_link_is_refused(
    docker_sandbox: DockerSandbox, layout: Layout, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    swapped = tmp_path / "notes"
    swapped.symlink_to(elsewhere)
    spec = SandboxSpec(layout.bundle, layout.data, {}, Limits(), ["true"], mounts=[Mount(swapped, "/mnt/notes")])
    with pytest.raises(DreamerError) as caught:
        docker_sandbox.plan(spec)
    assert caught.value.code == "permission_denied"


def test_the_cli_gets_none_of_the_kernels_environment(
    docker_sandbox: DockerSandbox, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DREAMER_TEST_SECRET", "hunter2")
    launch = docker_sandbox.plan(make_spec(layout, "pass"))
    assert set(launch.env) == {"PATH", "DOCKER_HOST", "DOCKER_CONFIG"}
    assert "hunter2" not in json.dumps(launch.argv)
    # A private, empty docker config: no user proxies or credential helpers.
    assert os.listdir(launch.env["DOCKER_CONFIG"]) == []


@pytest.fixture
def engine(docker_sandbox: DockerSandbox) -> Iterator[docker.DockerClient]:
    client = connect()
    yield client
    client.close()


def test_orphans_of_a_dead_kernel_are_reaped(docker_sandbox: DockerSandbox, engine: docker.DockerClient) -> None:
    namespace = docker_sandbox.owner.partition("@")[2]
    # pid 1 is alive but started at another time: the label names a kernel that is gone.
    dead = engine.containers.create(docker_sandbox.image, ["/none"], labels={LABEL_OWNER: f"1.1@{namespace}"})
    live = engine.containers.create(docker_sandbox.image, ["/none"], labels={LABEL_OWNER: docker_sandbox.owner})
    # A kernel in another pid namespace cannot be checked from here: left alone.
    foreign = engine.containers.create(docker_sandbox.image, ["/none"], labels={LABEL_OWNER: "1.1@4026530000"})
    try:
        removed = reap_orphans(engine)
        assert dead.name in removed
        assert live.name not in removed and foreign.name not in removed
        assert _containers(engine, dead.name) == []
        assert _containers(engine, live.name) == [live.name]
        assert _containers(engine, foreign.name) == [foreign.name]
    finally:
        for container in (dead, live, foreign):
            try:
                container.remove(force=True)
            except docker.errors.NotFound:
                pass


def test_runtime_image_is_made_locally_and_reused(docker_sandbox: DockerSandbox, engine: docker.DockerClient) -> None:
    links = {"/bin": "usr/bin", "/dreamer-test/venv": "/elsewhere/venv"}
    tag = ensure_image(engine, links)
    try:
        assert tag != docker_sandbox.image
        first = engine.images.get(tag)
        assert ensure_image(engine, links) == tag
        # The same image, not a second import: the second call only looked.
        assert engine.images.get(tag).id == first.id
        assert first.attrs["Size"] < 4096
        assert first.labels.get("dreamer.runtime") == "1"
    finally:
        engine.images.remove(tag, force=True)


def test_runtime_root_holds_only_mount_points_and_links() -> None:
    tarball = root_tarball({"/bin": "usr/bin", "/dreamer-test/venv": "/elsewhere/venv"})
    assert tarball == root_tarball({"/dreamer-test/venv": "/elsewhere/venv", "/bin": "usr/bin"})
    with tarfile.open(fileobj=io.BytesIO(tarball)) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert all(m.isdir() or m.issym() for m in members.values())
    assert members["bin"].issym() and members["bin"].linkname == "usr/bin"
    assert members["dreamer-test"].isdir()
    assert members["dreamer-test/venv"].linkname == "/elsewhere/venv"
    for point in MOUNT_POINTS:
        assert members[point].isdir()
    assert members["sbin"].isdir(), "docker's init is mounted at /sbin/docker-init: it must be a real folder"


def test_a_pruned_image_is_made_again_at_the_next_start(
    docker_sandbox: DockerSandbox, engine: docker.DockerClient, layout: Layout
) -> None:
    # A backend of its own (another image tag), so no other test's image goes away.
    links = {**system_layout()[0], "/dreamer-test/pruned": "/nowhere"}
    own = DockerSandbox(engine, docker_sandbox.cli, links, url=docker_sandbox.url, user=docker_sandbox.user)
    try:
        engine.images.remove(own.image, force=True)
        assert engine.images.list(name=own.image) == []
        report = reported(run_code(own, layout, "import json; print(json.dumps({'ok': True}))"))
        assert report == {"ok": True}
        assert len(engine.images.list(name=own.image)) == 1
    finally:
        own.close()
        engine.images.remove(own.image, force=True)


def test_worker_user_follows_the_engine() -> None:
    kernel_user = f"{os.getuid()}:{os.getgid()}"
    assert container_user({"SecurityOptions": ["name=seccomp,profile=default"]}) == kernel_user
    assert container_user({}) == kernel_user
    # Rootless: container root is the (unprivileged) user who runs the engine.
    assert container_user({"SecurityOptions": ["name=seccomp,profile=default", "name=rootless"]}) == "0:0"
