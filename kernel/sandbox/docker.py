"""The Docker backend: each worker is the main process of a locked-down container.

The kernel speaks to workers over the stdin/stdout pipes of a subprocess, so the
subprocess is `docker run --rm -i ...` (the docker CLI attaches the container's
stdio to its own): the container's process IS the worker, with no `docker exec`
per call. The Docker SDK does everything else: checking the engine, making the
runtime image (see dockerimage.py), and removing containers on kill and orphans
of dead kernels.

Inside, the worker sees what a bwrap worker sees: the host's /usr and Python
runtime read-only at their own paths, the SDK at /opt/dreamer/dreamer/sdk, its
bundle at /agent (read-only), its data at /data (read-write), a private /tmp. The
container has no network (`--network none`), no capabilities, no-new-privileges,
a read-only root, cgroup pids and memory limits and the same rlimits as bwrap.

It runs as the kernel's own uid:gid, like a bwrap worker, so files in /data stay
owned by the kernel's user on the host and the backends can be switched. When
the kernel runs as root, so does the worker, but with every capability dropped
it cannot override file permissions, chown, mount or trace anything.
"""

from __future__ import annotations

import asyncio
import atexit
import csv
import io
import logging
import os
import resource
import shutil
import tempfile
import uuid
import weakref
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import docker
from docker.errors import APIError, DockerException, NotFound
from requests.exceptions import RequestException

from dreamer.kernel.config import Limits, dreamer_home
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox.base import STDOUT_SLACK_BYTES, Launch, Sandbox, SandboxSpec
from dreamer.kernel.sandbox.confined import AGENT_DIR, DATA_DIR, confinement
from dreamer.kernel.sandbox.dockerimage import ensure_image, runtime_links, system_layout
from dreamer.kernel.sandbox.mounts import check_target
from dreamer.kernel.sandbox.rlimits import rlimit_table
from dreamer.kernel.sandbox.runtime import SDK_DIR_IN_SANDBOX, current_runtime
from dreamer.kernel.sandbox.spawn import create_process

log = logging.getLogger("dreamer.sandbox")

DEFAULT_ENGINE = "unix:///var/run/docker.sock"
TMP_SIZE = "64m"
API_TIMEOUT_S = 30

# Labels on every container: who it belongs to, and which kernel process started
# it, so a later kernel can tell orphans (owner dead) from live workers.
LABEL_OWNER = "dreamer.kernel"
LABEL_USER = "dreamer.user"
LABEL_AGENT = "dreamer.agent"

# Host programs (under the bound /usr) that start the worker inside the container:
# prlimit sets the rlimits docker cannot (address space), env -i clears what docker
# adds to every container's environment (HOSTNAME, its own PATH and HOME).
PRLIMIT = "/usr/bin/prlimit"
ENV = "/usr/bin/env"

# rlimits `docker run --ulimit` knows; the others go through prlimit.
DOCKER_ULIMITS = {
    resource.RLIMIT_CORE: "core",
    resource.RLIMIT_CPU: "cpu",
    resource.RLIMIT_DATA: "data",
    resource.RLIMIT_FSIZE: "fsize",
    resource.RLIMIT_MEMLOCK: "memlock",
    resource.RLIMIT_NOFILE: "nofile",
    resource.RLIMIT_NPROC: "nproc",
    resource.RLIMIT_STACK: "stack",
}
PRLIMIT_NAMES = {getattr(resource, n): n[len("RLIMIT_") :].lower() for n in dir(resource) if n.startswith("RLIMIT_")}


def engine_url() -> str:
    return os.environ.get("DOCKER_HOST") or DEFAULT_ENGINE


def no_engine(url: str) -> DreamerError:
    return DreamerError(
        "sandbox_unavailable", f"no Docker engine answers at {url}; start dockerd or choose DREAMER_SANDBOX=bwrap"
    )


def connect(url: str | None = None) -> docker.DockerClient:
    """A client of the engine at `url`, or one clear sentence why there is none."""
    url = url or engine_url()
    try:
        client = docker.DockerClient(base_url=url, version="auto", timeout=API_TIMEOUT_S)
        client.ping()
    except (DockerException, RequestException, OSError):
        raise no_engine(url) from None
    return client


def _started(pid: int) -> str | None:
    """When a process started (clock ticks since boot), or None when there is no such process."""
    try:
        stat = Path("/proc", str(pid), "stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid").removeprefix("pid:[").removesuffix("]")
    except OSError:
        return "unknown"


def kernel_owner() -> str:
    """`pid.starttime@pidns` of this kernel: a recycled pid never matches a dead kernel's
    label, and a kernel in another pid namespace is told apart from ours."""
    pid = os.getpid()
    return f"{pid}.{_started(pid) or 0}@{_pid_namespace()}"


def owner_alive(owner: str) -> bool:
    """Whether the kernel a label names still runs. One in another pid namespace (say, in
    a container sharing the engine) cannot be checked from here, so it counts as alive."""
    process, _, namespace = owner.partition("@")
    if namespace != _pid_namespace():
        return True
    pid, _, started = process.partition(".")
    return pid.isdigit() and _started(int(pid)) == started


def reap_orphans(client: docker.DockerClient) -> list[str]:
    """Remove dreamer containers whose kernel is gone (killed before it could clean up)."""
    removed: list[str] = []
    try:
        # The low-level listing: the high-level one inspects each container afterwards
        # and fails on one that is removed in between, which workers constantly are.
        found = client.api.containers(all=True, filters={"label": LABEL_OWNER})
    except (DockerException, RequestException):
        return removed
    for container in found:
        if owner_alive((container.get("Labels") or {}).get(LABEL_OWNER, "")):
            continue
        name = container["Names"][0].lstrip("/") if container.get("Names") else container["Id"]
        if remove_container(client, name):
            removed.append(name)
    if removed:
        log.warning("removed %d dreamer containers left behind by a kernel that is gone", len(removed))
    return removed


def remove_container(client: docker.DockerClient, name: str) -> bool:
    """Kill and remove a container; False when it was already gone (or on its way out)."""
    try:
        client.api.remove_container(name, force=True)
    except NotFound:
        return False
    except APIError as error:
        if error.status_code == 409:  # removal already in progress (--rm)
            return False
        log.warning("could not remove container %s: %s", name, error.explanation or error)
        return False
    except (DockerException, RequestException) as error:
        log.warning("could not remove container %s: %s", name, error)
        return False
    return True


def _mount(source: Path | str, target: str, *, writable: bool) -> list[str]:
    # --mount rather than -v: a source with ':' cannot be said with -v, and a missing
    # source is an error instead of a folder docker creates. The value is CSV, so
    # a path with ',' or '"' is quoted the way docker's parser expects.
    fields = ["type=bind", f"source={source}", f"target={target}"]
    if not writable:
        fields.append("readonly")
    line = io.StringIO()
    csv.writer(line, lineterminator="").writerow(fields)
    return ["--mount", line.getvalue()]


@lru_cache(maxsize=1)
def cli_config_dir() -> Path:
    """An empty folder for DOCKER_CONFIG, one per kernel process."""
    folder = Path(tempfile.mkdtemp(prefix="dreamer-docker-cli-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def container_user(info: Mapping[str, object]) -> str:
    """uid:gid the worker runs as, given the engine's `docker info`.

    A rootful engine: the kernel's own, so files in /data belong to the kernel's user
    on the host. A rootless engine maps its container root to the user who runs it,
    who is the kernel's user; any other uid inside would be a stranger on the host.
    """
    options = info.get("SecurityOptions") or []
    if isinstance(options, list) and any("name=rootless" in str(option) for option in options):
        return "0:0"
    return f"{os.getuid()}:{os.getgid()}"


def _granted_source(source: Path) -> Path:
    """The granted folder, checked again just before the start.

    dockerd resolves the path itself, so unlike bwrap the kernel cannot hand it a
    descriptor of the folder it checked; refusing a path that stopped being the
    canonical folder narrows the window to the engine's own lookup.
    """
    real = os.path.realpath(source)
    if real != str(source) or not os.path.isdir(real):
        raise DreamerError("permission_denied", f"the granted folder {source} was replaced while the sandbox started")
    return Path(real)


def _labels_for(data: Path, env: Mapping[str, str]) -> dict[str, str]:
    """user and agent from the data folder's place (users/USER/agents/AGENT/data), if it is one."""
    labels = {LABEL_AGENT: str(env.get("DREAMER_AGENT", ""))}
    try:
        parts = data.relative_to(dreamer_home() / "users").parts
    except ValueError:
        parts = ()
    if len(parts) == 4 and parts[1] == "agents" and parts[3] == "data":
        labels[LABEL_USER] = parts[0]
        labels[LABEL_AGENT] = parts[2]
    return labels


def _rlimit_args(limits: Limits) -> tuple[list[str], list[str]]:
    """(docker --ulimit flags, prlimit flags) for the same table the bwrap backend applies."""
    ulimits: list[str] = []
    prlimits: list[str] = []
    for kind, value in rlimit_table(limits):
        if kind in DOCKER_ULIMITS:
            ulimits += ["--ulimit", f"{DOCKER_ULIMITS[kind]}={value}:{value}"]
        else:
            prlimits.append(f"--{PRLIMIT_NAMES[kind]}={value}:{value}")
    return ulimits, prlimits


class DockerSandbox(Sandbox):
    name = "docker"

    def __init__(
        self,
        client: docker.DockerClient,
        cli: str,
        image_links: dict[str, str],
        *,
        url: str,
        user: str,
    ) -> None:
        self.client = client
        self.cli = cli
        self.url = url
        self.user = user
        self._image_links = image_links
        self.image = ensure_image(client, image_links)
        self.owner = kernel_owner()
        _, self._system_folders = system_layout()
        self._names: weakref.WeakKeyDictionary[asyncio.subprocess.Process, str] = weakref.WeakKeyDictionary()
        # Removal is an HTTP round trip to the engine; it must not stall the event loop
        # that serves every other user. Executor threads are joined at interpreter exit,
        # so a kernel shutting down still removes the containers of its last workers.
        self._removals = ThreadPoolExecutor(max_workers=2, thread_name_prefix="dreamer-docker-rm")

    # -- planning ----------------------------------------------------------------------

    def plan(self, spec: SandboxSpec) -> Launch:
        return self._plan(spec)[0]

    def _plan(self, spec: SandboxSpec) -> tuple[Launch, str]:
        confined = confinement(spec)
        bundle, data, runtime, env = confined.bundle, confined.data, confined.runtime, confined.env
        name = f"dreamer-{uuid.uuid4().hex}"
        memory = f"{spec.limits.address_space_mb}m"
        ulimits, prlimits = _rlimit_args(spec.limits)
        args = [
            self.cli, "run", "--rm", "--interactive", "--init", "--pull", "never",
            "--name", name,
            "--label", f"{LABEL_OWNER}={self.owner}",
        ]
        for key, value in _labels_for(data, spec.env).items():
            args += ["--label", f"{key}={value}"]
        args += [
            "--network", "none",
            "--cap-drop", "ALL",
            "--security-opt", "no-new-privileges",
            "--read-only",
            "--ipc", "private",
            "--hostname", "dreamer",
            # Attached stdio is streamed to the CLI whatever the log driver; without
            # `none` the engine would also keep a copy of everything a worker prints.
            "--log-driver", "none",
            # Every process and thread of the container, tini included.
            "--pids-limit", str(spec.limits.processes),
            # The cgroup bounds all the container's processes together; RLIMIT_AS
            # (below) bounds each one, so one process alone meets the same ceiling
            # as under bwrap.
            "--memory", memory,
            "--memory-swap", memory,
            "--user", self.user,
            "--workdir", DATA_DIR,
            "--tmpfs", f"/tmp:rw,nosuid,nodev,size={TMP_SIZE}",
            *ulimits,
        ]
        args += _mount("/usr", "/usr", writable=False)
        for folder in self._system_folders:
            args += _mount(folder, folder, writable=False)
        for root in runtime.roots:
            args += _mount(root, str(root), writable=False)
        args += _mount(runtime.sdk_dir, SDK_DIR_IN_SANDBOX, writable=False)
        args += _mount(bundle, AGENT_DIR, writable=False)
        args += _mount(data, DATA_DIR, writable=True)
        for granted in spec.mounts:
            check_target(granted.target)
            args += _mount(_granted_source(granted.source), granted.target, writable=granted.writable)
        command = list(spec.argv) if spec.argv is not None else runtime.worker_argv()
        inner = [PRLIMIT, *prlimits, "--", ENV, "-i", *(f"{k}={v}" for k, v in env.items()), *command]
        # The CLI itself gets only what it needs to reach the engine; nothing of the
        # kernel's environment, and no user docker config (which could inject proxies).
        cli_env = {"PATH": "/usr/bin:/bin", "DOCKER_HOST": self.url, "DOCKER_CONFIG": str(cli_config_dir())}
        return Launch(argv=[*args, self.image, *inner], env=cli_env, cwd=data), name

    # -- running -----------------------------------------------------------------------

    def _check_image(self) -> None:
        """The image again (one API call): someone may have pruned it since the last start."""
        try:
            ensure_image(self.client, self._image_links)
        except DreamerError:
            try:
                self.client.ping()
            except (DockerException, RequestException):
                raise no_engine(self.url) from None
            raise

    async def start(self, spec: SandboxSpec) -> asyncio.subprocess.Process:
        launch, name = self._plan(spec)
        await asyncio.to_thread(self._check_image)
        try:
            # No preexec rlimits here, unlike the base: they would bind the docker CLI
            # (a Go program the kernel trusts), not the worker; the worker gets them
            # inside the container from --ulimit and prlimit.
            process = await create_process(
                *launch.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=launch.env,
                cwd=launch.cwd,
                start_new_session=True,
                limit=spec.limits.max_message_bytes + STDOUT_SLACK_BYTES,
            )
        except OSError as error:
            reason = error.strerror or str(error)
            raise DreamerError("sandbox_unavailable", f"cannot start the docker sandbox ({self.cli}): {reason}") from None
        self._names[process] = name
        return process

    def container_name(self, process: asyncio.subprocess.Process) -> str | None:
        """The container a worker runs in (until it is killed)."""
        return self._names.get(process)

    def kill(self, process: asyncio.subprocess.Process) -> None:
        """Stop the CLI at once, and remove the container (and all in it) in the background.

        Killing the CLI alone would leave the container running: it only stops
        relaying. Removing by name reaches the container whether it is running,
        exiting on its own (--rm) or already gone.
        """
        super().kill(process)
        name = self._names.pop(process, None)
        if name is not None:
            try:
                self._removals.submit(remove_container, self.client, name)
            except RuntimeError:  # the interpreter is shutting down: do it now
                remove_container(self.client, name)

    def close(self) -> None:
        """Wait for pending removals, then let go of the engine connection."""
        self._removals.shutdown(wait=True)
        self.client.close()


def open_docker_sandbox(url: str | None = None) -> DockerSandbox:
    """Connect, make sure the runtime image exists, reap orphans: a backend ready to start workers."""
    url = url or engine_url()
    cli = shutil.which("docker")
    if cli is None:
        raise DreamerError(
            "sandbox_unavailable",
            "the docker command-line client is not installed; install the Debian package docker.io "
            "or choose DREAMER_SANDBOX=bwrap",
        )
    for program in (PRLIMIT, ENV):
        if not os.access(program, os.X_OK):
            raise DreamerError("sandbox_unavailable", f"the docker sandbox needs {program} on the host (util-linux, coreutils)")
    client = connect(url)
    links, _ = system_layout()
    try:
        info = client.info()
    except (DockerException, RequestException):
        raise no_engine(url) from None
    sandbox = DockerSandbox(client, cli, {**links, **runtime_links(current_runtime())}, url=url, user=container_user(info))
    reap_orphans(client)
    return sandbox
