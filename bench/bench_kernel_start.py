"""How long a kernel takes to answer /healthz: a first start (a new home: migrations and the
starter agents) and a restart on the same home, plus what a spawned planning process pays to
import the kernel's main module.

    .venv/bin/python bench/bench_kernel_start.py [--runs 3]

Prints medians of one run each; the machine's load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(home: Path) -> float:
    port = _port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMER_")} | {
        "DREAMER_HOME": str(home), "DREAMER_LOG_LEVEL": "warning"}
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "dreamer.host.server", "127.0.0.1", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"the kernel exited with status {proc.returncode}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    return time.monotonic() - began
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait(30)


def _import_main() -> float:
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", "import dreamer.host.server"], check=True)
    return time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    first, again, imports = [], [], []
    for _ in range(runs):
        home = Path(tempfile.mkdtemp()) / "home"
        first.append(_start(home))
        again.append(_start(home))
        imports.append(_import_main())
    print(f"load average {os.getloadavg()[0]:.1f}; {runs} runs, medians:")
    print(f"  first start (new home) to /healthz: {statistics.median(first):.1f} s")
    print(f"  restart (same home) to /healthz:    {statistics.median(again):.1f} s")
    print(f"  a planning process importing the main module: {statistics.median(imports) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
