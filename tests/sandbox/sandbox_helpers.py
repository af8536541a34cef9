"""Helpers shared by the sandbox tests: a fake installation and running code in a sandbox.

Everything runs against the real backends (/usr/bin/bwrap and plain processes);
child programs report what they saw as one JSON object on their last stdout line.
"""

from __future__ import annotations

import asyncio
import json
import os
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dreamer.kernel.config import Limits
from dreamer.kernel.sandbox import Sandbox, SandboxSpec
from dreamer.kernel.sandbox.runtime import current_runtime

RUN_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Layout:
    home: Path
    bundle: Path
    data: Path
    kernel_db: Path
    other_agent_secret: Path


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    report: dict[str, object] = field(default_factory=dict)


def python_argv(code: str, args: Sequence[str] = ()) -> list[str]:
    return [current_runtime().python, "-S", "-c", textwrap.dedent(code), *args]


def make_spec(
    layout: Layout,
    code: str,
    *,
    limits: Limits | None = None,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
) -> SandboxSpec:
    return SandboxSpec(
        bundle_dir=layout.bundle,
        data_dir=layout.data,
        env=dict(env or {"DREAMER_AGENT": "probe", "DREAMER_ENTRY": "main"}),
        limits=limits or Limits(),
        argv=python_argv(code, args),
    )


async def run_spec(sandbox: Sandbox, spec: SandboxSpec) -> Outcome:
    process = await sandbox.start(spec)
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=RUN_TIMEOUT_S)
    finally:
        sandbox.kill(process)
        await process.wait()
    outcome = Outcome(process.returncode or 0, stdout.decode(errors="replace"), stderr.decode(errors="replace"))
    lines = outcome.stdout.strip().splitlines()
    if lines:
        try:
            outcome.report = json.loads(lines[-1])
        except json.JSONDecodeError:
            pass
    return outcome


def run_code(sandbox: Sandbox, layout: Layout, code: str, **kwargs: object) -> Outcome:
    """Run a Python snippet in the sandbox to completion; its last line is a JSON report."""
    return asyncio.run(run_spec(sandbox, make_spec(layout, code, **kwargs)))  # type: ignore[arg-type]


def reported(outcome: Outcome) -> dict[str, object]:
    assert outcome.returncode == 0, f"exit {outcome.returncode}; stderr: {outcome.stderr}"
    assert outcome.report, f"no JSON report; stdout: {outcome.stdout!r} stderr: {outcome.stderr!r}"
    return outcome.report


def live_pids_with(marker: str) -> list[int]:
    """Host pids of running (not zombie) processes whose command line holds `marker`."""
    found: list[int] = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path("/proc", entry, "cmdline").read_bytes()
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        state = stat.rsplit(")", 1)[-1].split()[0]
        if needle in cmdline and state not in ("Z", "X"):
            found.append(int(entry))
    return found
