"""`dreamer database`: one SQL statement against a user's agent database, run in its sandbox."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.audit.log import append as audit
from dreamer.kernel.config import Settings
from dreamer.kernel.install.registry import get_installed
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.sandbox.base import Sandbox, SandboxSpec
from dreamer.kernel.store.db import Store

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
    if not isinstance(answer, dict):
        raise DreamerError("internal", "the database shell answered with something other than an object")
    if "error" in answer:
        raise DreamerError(answer["error"]["code"], answer["error"]["message"])
    return answer


async def query_agent(
    store: Store, sandbox: Sandbox, settings: Settings, who: Principal, agent: str, query: str, *, write: bool
) -> dict[str, Any]:
    """Run one SQL statement on one of the user's agents' own database; a write is audited."""
    with store.session() as s:
        installed = get_installed(s, who.user_id, agent)
    answer = await run_query(
        sandbox, settings, user=who.user_name, agent=agent, bundle_dir=installed.bundle_path, query=query, write=write,
    )
    if write:
        with store.session() as s:
            audit(s, user_id=who.user_id, actor=who.actor, action="database.write", target=agent,
                  decision="allow", detail={"changes": answer.get("changes"), "query": query[:500]})
    return answer
