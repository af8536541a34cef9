"""`dreamer up` and `dreamer down`: start and stop the local kernel process.

`up` is the only command that imports kernel code, lazily, because it is the
one that *becomes* the kernel; every other command speaks HTTP.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Literal

import httpx
import typer
from rich.markup import escape

from dreamer.cli.client import CLIError, tls_for
from dreamer.cli.commands.common import JsonOpt, UserOpt, guarded
from dreamer.cli.config import CLIConfig, host_port, load_config
from dreamer.cli.output import Output

# A first start installs the starter agents and loads the meaning model: on a busy two-core
# machine that has taken over 30 s. The wait shows a spinner, and the kernel log is named on failure.
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 15.0
LOG_TAIL_LINES = 20

Health = Literal["kernel", "none", "other"]


def probe(url: str, http: httpx.Client | None = None) -> Health:
    """Whether a dreamer kernel, nothing, or something else answers at url (through `http`, when
    a caller polling it has a client, or a client of its own)."""
    if http is None:
        with _prober(url) as own:
            return probe(url, own)
    try:
        response = http.get(f"{url}/healthz")
    except httpx.HTTPError:
        return "none"
    try:
        body = response.json()
    except ValueError:
        return "other"
    return "kernel" if response.status_code == 200 and isinstance(body, dict) and body.get("ok") is True else "other"


def _prober(url: str) -> httpx.Client:
    return httpx.Client(timeout=2.0, trust_env=False, verify=tls_for(url))


def _local_url(host: str, port: int) -> str:
    # A kernel bound to every interface is reached through loopback.
    reach = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    if ":" in reach:
        reach = f"[{reach}]"
    return f"http://{reach}:{port}"


def _tail(path: Path, start: int, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(start)
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _start_detached(config: CLIConfig, host: str, port: int, out: Output) -> int:
    config.home.mkdir(parents=True, exist_ok=True)
    node = os.environ.get("DREAMER_NODE")
    log_path = config.home / f"kernel-{node}.log" if node else config.log_path
    with log_path.open("ab") as log:
        start = log.tell()
        # A new session: the kernel must outlive this command and ignore the terminal's ^C.
        proc = subprocess.Popen(
            [sys.executable, "-m", "dreamer.cli.main", "up", "--host", host, "--port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    url = _local_url(host, port)
    deadline = time.monotonic() + START_TIMEOUT_S
    with out.err.status(f"Starting the dreamer kernel at {url} ..."), _prober(url) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if probe(url, http) == "kernel":
                return proc.pid
            time.sleep(0.2)
    if proc.poll() is None:
        # Half-started kernels hold the port and the database; do not leave one behind.
        proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
        why = f"did not answer within {START_TIMEOUT_S:.0f} s"
    else:
        why = f"exited with status {proc.returncode}"
    tail = _tail(log_path, start)
    if tail:
        out.note(f"[dim]last lines of {escape(str(log_path))}:[/]\n{escape(tail)}")
    raise CLIError("kernel_failed", f"The kernel {why}; its log is {log_path}.")


def up(
    detach: Annotated[bool, typer.Option("--detach", "-d", help="Run in the background; return once it answers.")] = False,
    host: Annotated[str | None, typer.Option("--host", help="Address to bind (default: from DREAMER_URL, else 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option("--port", min=1, max=65535, help="Port (default: from DREAMER_URL, else 8700).")] = None,
    node: Annotated[str | None, typer.Option(
        "--node", help="Run as this node of a multi-node installation (PostgreSQL required; see docs/SCALING.md).")] = None,
    advertise: Annotated[str | None, typer.Option(
        "--advertise", help="With --node: the URL other nodes and the load balancer reach this one at.")] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Start the dreamer kernel (in the foreground unless --detach)."""
    out = Output(json_out)
    if advertise and not node:
        raise CLIError("invalid_argument", "--advertise goes with --node NAME: it is the address of that node")
    if node:
        # Read by load_settings in this process and inherited by a detached kernel.
        os.environ["DREAMER_NODE"] = node
        if advertise:
            os.environ["DREAMER_ADVERTISE"] = advertise
    config = load_config()
    default_host, default_port = host_port(config.url)
    host = host or default_host
    port = port or default_port
    url = _local_url(host, port)
    found = probe(url)
    if found == "kernel":
        if json_out:
            out.json({"url": url, "running": True, "already_running": True, "pid": _read_pid(config.pid_path)})
        else:
            out.say(f"A dreamer kernel already answers at {escape(url)}.")
        return
    if found == "other":
        raise CLIError("port_in_use", f"Something that is not a dreamer kernel answers at {url}; pick another --port.")
    if detach:
        pid = _start_detached(config, host, port, out)
        if json_out:
            out.json({"url": url, "running": True, "already_running": False, "pid": pid})
        else:
            out.say(f"The dreamer kernel runs at {escape(url)} (pid {pid}); stop it with `dreamer down`.")
        return
    from dreamer.host.server import serve  # lazily: only `up` needs the kernel's dependencies

    out.note(f"Starting the dreamer kernel at {escape(url)}; Ctrl-C stops it.")
    try:
        serve(host, port)
    except KeyboardInterrupt:
        pass


def _read_pid(path: Path) -> int | None:
    """The first integer in the pid file (plain number or JSON {"pid": N}), or None."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    digits = ""
    for ch in text:
        if ch.isdigit():
            digits += ch
        elif digits:
            break
    pid = int(digits) if digits else 0
    return pid if pid > 1 else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie has exited already; only its parent's wait() is missing.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _is_dreamer(pid: int) -> bool:
    """Guard against a stale pid file whose number now belongs to another program."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc: trust the pid file
    return b"dreamer" in cmdline


def down(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Stop the kernel started by `dreamer up`."""
    out = Output(json_out)
    config = load_config()
    pid = _read_pid(config.pid_path)
    if pid is None or not _alive(pid) or not _is_dreamer(pid):
        config.pid_path.unlink(missing_ok=True)
        if json_out:
            out.json({"stopped": None})
        else:
            out.say("No kernel is running.")
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    except PermissionError:
        raise CLIError("forbidden", f"The kernel (pid {pid}) belongs to another user; you may not stop it.") from None
    deadline = time.monotonic() + STOP_TIMEOUT_S
    with out.err.status(f"Stopping the dreamer kernel (pid {pid}) ..."):
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
    forced = False
    if _alive(pid):
        forced = True
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        # SIGKILL cannot be ignored; the short wait is for the kernel's exit to register.
        deadline = time.monotonic() + 5.0
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
    config.pid_path.unlink(missing_ok=True)
    if json_out:
        out.json({"stopped": pid, "forced": forced})
    else:
        out.say(f"Stopped the dreamer kernel (pid {pid}){' by force' if forced else ''}.")


def register(app: typer.Typer) -> None:
    app.command("up")(guarded(up))
    app.command("down")(guarded(down))
