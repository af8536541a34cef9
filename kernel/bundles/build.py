"""Describe an agent's functions by importing its entry module inside the sandbox.

This is how functions.json is made: the kernel never imports agent code itself.
"""

from __future__ import annotations

from pathlib import Path

from dreamer.contracts.functions import FunctionSpec, FunctionsFile
from dreamer.contracts.manifest import Manifest
from dreamer.kernel.config import Settings
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox.base import Sandbox, SandboxSpec
from dreamer.kernel.workers.connection import WorkerConnection

DESCRIBE_TIMEOUT_S = 30.0


async def describe_bundle(
    sandbox: Sandbox, settings: Settings, bundle: Path, manifest: Manifest, scratch: Path
) -> list[FunctionSpec]:
    scratch.mkdir(parents=True, exist_ok=True)
    spec = SandboxSpec(
        bundle_dir=bundle,
        data_dir=scratch,
        env={"DREAMER_AGENT": manifest.name, "DREAMER_ENTRY": manifest.entry or ""},
        limits=settings.limits,
    )
    logs: list[str] = []
    worker = WorkerConnection(process=await sandbox.start(spec), label=manifest.name, kill_group=sandbox.kill)
    try:
        result = await worker.request(
            "describe", {}, timeout=DESCRIBE_TIMEOUT_S, sink=lambda _s, _l, m: logs.append(m),
            what=f"importing {manifest.entry}",
        )
    except DreamerError as exc:
        tail = "; ".join(line for line in logs[-3:] if line.strip())
        raise DreamerError("invalid_bundle", f"{manifest.name}: {exc.message}" + (f" ({tail})" if tail and exc.code != "import_error" else "")) from None
    finally:
        await worker.close(grace=0.5)
    try:
        parsed = FunctionsFile.model_validate({"format": 1, "functions": (result or {}).get("functions", [])})
    except Exception as exc:  # noqa: BLE001 - pydantic.ValidationError: the agent declared something unusable
        raise DreamerError("invalid_bundle", f"{manifest.name}: its functions cannot be described: {str(exc).splitlines()[0]}") from None
    if not parsed.functions:
        raise DreamerError("invalid_bundle", f"{manifest.name}: {manifest.entry} defines no @function")
    return list(parsed.functions)
