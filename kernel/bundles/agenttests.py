"""Run a bundle's own tests in the sandbox (`dreamer test`), never in the kernel."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from dreamer.contracts.manifest import Manifest
from dreamer.kernel.config import Settings
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox.base import Sandbox, SandboxSpec

TEST_TIMEOUT_S = 300.0
MAX_OUTPUT_CHARS = 64 * 1024


async def run_agent_tests(sandbox: Sandbox, settings: Settings, bundle: Path, manifest: Manifest, scratch: Path) -> dict[str, Any]:
    scratch.mkdir(parents=True, exist_ok=True)
    spec = SandboxSpec(
        bundle_dir=bundle, data_dir=scratch, limits=settings.limits,
        env={"DREAMER_AGENT": manifest.name, "DREAMER_ENTRY": manifest.entry or ""},
        argv=[sys.executable, "-S", "-m", "dreamer.sdk.agenttest"],
    )
    process = await sandbox.start(spec)
    try:
        out, err = await asyncio.wait_for(process.communicate(b""), TEST_TIMEOUT_S)
    except TimeoutError:
        sandbox.kill(process)
        raise DreamerError("timeout", f"{manifest.name}'s tests did not finish within {TEST_TIMEOUT_S:g} s and were stopped") from None
    output = (out + err).decode("utf-8", "replace")
    if "dreamer-agenttest: no tests/ folder" in output:
        raise DreamerError("not_found", f"{manifest.name} has no tests/ folder; put pytest tests in tests/ inside the bundle")
    if "dreamer-agenttest: pytest is not installed" in output:
        raise DreamerError("not_available", "pytest is not installed in the Python runtime the sandbox uses; install it there (pip install pytest) to run agent tests")
    code = process.returncode
    return {"passed": code == 0, "exit_code": code, "output": output[-MAX_OUTPUT_CHARS:]}
