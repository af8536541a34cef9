"""Cold start and idle memory of one sandboxed worker, without the kernel around it.

Measured side by side in one run, interleaved so that every row sees the same load:

- `worker_first_answer`: `Sandbox.start` of the real worker (`python -S -m dreamer.sdk.worker`
  with the grocery starter bundle) until its answer to the first `invoke` arrives;
- `sandbox_floor`: the same sandbox running `python -S -c pass`: bwrap and a bare
  interpreter, no imports (what no import cut can go below);
- `bare_import_sdk`: `python -S -c "import dreamer.sdk"` on the host, no sandbox.

Then idle memory of the started workers from /proc/PID/smaps_rollup
(kernel/workers/procmem.py): the interpreter alone and its whole tree (bwrap's
monitor and the namespace's init included), RSS, PSS and USS.

With several backends (`--sandbox bwrap,forkserver`) their starts are interleaved, run by
run, so each sees the same load; the forkserver's zygote is started (and warmed) by the
unmeasured first start, as a kernel starts it once, and its own memory is reported once.

    .venv/bin/python bench/bench_worker_start.py --runs 20 [--sandbox bwrap,forkserver] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from dreamer.kernel.config import Limits
from dreamer.kernel.sandbox.base import Sandbox, SandboxSpec
from dreamer.kernel.sandbox.runtime import current_runtime
from dreamer.kernel.sandbox.select import get_sandbox
from dreamer.kernel.workers.procmem import ProcMemory, descendants, process_memory, tree_memory
from dreamer.sdk.protocol import decode, encode, request


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def summary(samples: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(samples) * 1000, 2), "p90_ms": round(pct(samples, 90) * 1000, 2),
            "n": len(samples)}


def grocery_bundle(root: Path) -> Path:
    from dreamer.agents.bundles import starter_bundles

    folder = next(p for p in starter_bundles() if p.name == "grocery")
    target = root / "bundle"
    shutil.copytree(folder, target)
    return target


def entry_of(bundle: Path) -> str:
    import yaml

    return str(yaml.safe_load((bundle / "agent.yaml").read_text())["entry"])


INVOKE = {
    "invocation_id": "bench",
    "function": "list_items",
    "args": {},
    "user": {"id": 1, "name": "bench"},
}


async def first_answer(sandbox: Sandbox, spec: SandboxSpec) -> tuple[float, asyncio.subprocess.Process]:
    """Start a worker and send one invoke; seconds until its answer, and the live process."""
    t = time.perf_counter()
    process = await sandbox.start(spec)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(encode(request(1, "invoke", INVOKE)))
    while True:
        line = await process.stdout.readline()
        if not line:
            err = await process.stderr.read() if process.stderr is not None else b""
            raise RuntimeError(f"worker ended without answering: {err.decode(errors='replace')[-2000:]}")
        message = decode(line)
        if getattr(message, "method", None) is not None:
            # A syscall (a log line, say): answer with an empty result and keep reading.
            process.stdin.write(encode({"jsonrpc": "2.0", "id": message.id, "result": None}))  # type: ignore[union-attr]
            continue
        break
    elapsed = time.perf_counter() - t
    if getattr(message, "error", None) is not None:
        raise RuntimeError(f"the worker answered with an error: {message.error}")  # type: ignore[union-attr]
    return elapsed, process


async def run_to_end(sandbox: Sandbox, spec: SandboxSpec) -> float:
    t = time.perf_counter()
    process = await sandbox.start(spec)
    await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"{spec.argv} exited with status {process.returncode}")
    return time.perf_counter() - t


async def bare_import(python: str, env: dict[str, str]) -> float:
    t = time.perf_counter()
    process = await asyncio.create_subprocess_exec(python, "-S", "-c", "import dreamer.sdk", env=env)
    await process.wait()
    return time.perf_counter() - t


def host_env() -> dict[str, str]:
    """PYTHONPATH that finds dreamer.sdk and the site packages, as a worker's does (no site module)."""
    import sysconfig

    import dreamer.sdk

    root = tempfile.mkdtemp(prefix="dreamer-bench-sdk-")
    os.makedirs(os.path.join(root, "dreamer"))
    os.symlink(os.path.dirname(dreamer.sdk.__file__), os.path.join(root, "dreamer", "sdk"))
    return {"PYTHONPATH": os.pathsep.join([root, sysconfig.get_paths()["purelib"]]), "PATH": "/usr/bin:/bin",
            "PYDANTIC_DISABLE_PLUGINS": "__all__"}


# A forked worker runs under the zygote's command line: nothing was executed.
ZYGOTE_MARK = b"dreamer_forkserver.zygote"


def interpreter_of(pid: int) -> int | None:
    """The worker's interpreter among a started worker's processes (the deepest one of a fork)."""
    found = None
    for member in descendants(pid):
        try:
            cmd = Path(f"/proc/{member}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmd and b"python" in cmd[0] and b"dreamer.sdk.worker" in cmd:
            return member
        if any(ZYGOTE_MARK in part for part in cmd):
            found = member  # init (when still Python), worker: breadth first, the worker comes last
    return found


def memory_report(processes: list[asyncio.subprocess.Process]) -> dict[str, object]:
    own: list[ProcMemory] = []
    trees: list[ProcMemory] = []
    for process in processes:
        inner = interpreter_of(process.pid)
        found = process_memory(inner) if inner is not None else None
        if found is None:
            continue
        own.append(found)
        trees.append(tree_memory(process.pid))

    def med(values: list[int]) -> float | None:
        return round(statistics.median(values) / 1024, 2) if values else None

    return {
        "workers": len(own),
        "interpreter_rss_mb": med([m.rss_kb for m in own]),
        "interpreter_pss_mb": med([m.pss_kb for m in own]),
        "interpreter_uss_mb": med([m.uss_kb for m in own]),
        "tree_pss_mb": med([m.pss_kb for m in trees]),
        "tree_uss_mb": med([m.uss_kb for m in trees]),
    }


async def main_async(args: argparse.Namespace) -> dict[str, object]:
    sandboxes = [get_sandbox(name) for name in args.sandbox.split(",")]
    python = current_runtime().python
    env = host_env()
    report: dict[str, object] = {"sandboxes": [s.name for s in sandboxes], "cores": os.cpu_count(),
                                 "load_average": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="dreamer-bench-") as tmp:
        root = Path(tmp)
        bundle = grocery_bundle(root)
        limits = Limits()

        def spec(n: int, argv: list[str] | None = None) -> SandboxSpec:
            data = root / f"data{n}"
            if not data.exists():
                # The first call of the day, not the first call ever: agent.db exists
                # (creating it is fsyncs, not start-up). data0 is the unmeasured warm-up's.
                template = root / "data0"
                if n and template.exists():
                    shutil.copytree(template, data)
                else:
                    data.mkdir()
            extra = {"DREAMER_AGENT": "grocery", "DREAMER_ENTRY": entry_of(bundle)}
            return SandboxSpec(bundle_dir=bundle, data_dir=data, env=extra, limits=limits, argv=argv)

        # One of each first, unmeasured: page cache, seccomp program, cgroup discovery, the zygote.
        for sandbox in sandboxes:
            _, warmup = await first_answer(sandbox, spec(0))
            sandbox.kill(warmup)
            await warmup.wait()
        cold: dict[str, list[float]] = {s.name: [] for s in sandboxes}
        floor: dict[str, list[float]] = {s.name: [] for s in sandboxes}
        alive: dict[str, list[asyncio.subprocess.Process]] = {s.name: [] for s in sandboxes}
        bare: list[float] = []
        for n in range(1, args.runs + 1):
            for k, sandbox in enumerate(sandboxes):
                data_n = n * len(sandboxes) + k
                elapsed, process = await first_answer(sandbox, spec(data_n))
                cold[sandbox.name].append(elapsed)
                if len(alive[sandbox.name]) < args.keep:
                    alive[sandbox.name].append(process)
                else:
                    sandbox.kill(process)
                    await process.wait()
                floor[sandbox.name].append(await run_to_end(sandbox, spec(data_n, [python, "-S", "-c", "pass"])))
            bare.append(await bare_import(python, env))
        await asyncio.sleep(0.5)  # idle: whatever the first call allocated has settled
        for sandbox in sandboxes:
            name = sandbox.name
            report[name] = {
                "worker_first_answer": summary(cold[name]),
                "sandbox_floor": summary(floor[name]),
                "ratio_first_answer_to_floor": round(statistics.median(cold[name]) / statistics.median(floor[name]), 2),
                "idle_worker_memory": memory_report(alive[name]),
            }
            zygote = getattr(getattr(sandbox, "_zygote", None), "process", None)
            if zygote is not None:
                found = process_memory(zygote.pid)
                # Shared by every worker forked from it: counted once, not per worker.
                report[name]["zygote_memory"] = found.mb() if found else None  # type: ignore[index]
        report["bare_import_sdk"] = summary(bare)
        if len(sandboxes) > 1:
            first, *others = sandboxes
            report["ratio_first_answer_to_" + first.name] = {
                s.name: round(statistics.median(cold[s.name]) / statistics.median(cold[first.name]), 3) for s in others
            }
        for sandbox in sandboxes:
            for process in alive[sandbox.name]:
                sandbox.kill(process)
                await process.wait()
            close = getattr(sandbox, "close", None)
            if close is not None:
                close()
    report["load_average_after"] = os.getloadavg()
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20, help="cold starts to measure")
    parser.add_argument("--keep", type=int, default=5, help="workers kept alive for the memory measurement")
    parser.add_argument("--sandbox", default="bwrap", help="bwrap (default), forkserver, none, or several: bwrap,forkserver")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = asyncio.run(main_async(args))
    print(json.dumps(report, indent=None if args.json else 2))


if __name__ == "__main__":
    sys.exit(main())
