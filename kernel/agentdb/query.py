"""`dreamer database`: one SQL statement against a user's agent database, run in its sandbox."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from dreamer.kernel.config import Settings
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox.base import Sandbox, SandboxSpec

MAX_QUERY_CHARS = 100_000
MAX_ROWS = 1000
TIMEOUT_S = 30.0


async def run_query(
    sandbox: Sandbox, settings: Settings, *, user: str, agent: str, bundle_dir: Any, query: str, write: bool
) -> dict[str, Any]:
    if not query.strip():
        raise DreamerError("invalid_argument", "the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise DreamerError("invalid_argument", f"the query is longer than {MAX_QUERY_CHARS} characters")
    data = settings.agent_data_dir(user, agent)
    data.mkdir(parents=True, exist_ok=True)
    spec = SandboxSpec(
        bundle_dir=bundle_dir,
        data_dir=data,
        env={"DREAMER_AGENT": agent},
        limits=settings.limits,
        argv=[sys.executable, "-S", "-m", "dreamer.sdk.dbshell"],
    )
    process = await sandbox.start(spec)
    request = json.dumps({"query": query, "write": write, "max_rows": MAX_ROWS}).encode() + b"\n"
    try:
        out, err = await asyncio.wait_for(process.communicate(request), TIMEOUT_S)
    except TimeoutError:
        sandbox.kill(process)
        raise DreamerError("timeout", f"the query did not finish within {TIMEOUT_S:g} s and was stopped") from None
    try:
        answer = json.loads(out.decode().strip().splitlines()[-1])
    except (IndexError, ValueError):
        detail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise DreamerError("internal", f"the database shell failed: {detail[0]}") from None
    if "error" in answer:
        raise DreamerError(answer["error"]["code"], answer["error"]["message"])
    return answer
