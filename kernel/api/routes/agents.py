from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from dreamer.kernel.agentdb.query import query_agent
from dreamer.contracts.http import read_limited
from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.kernel.api.schemas import CallBody, CallResult, InstallBody, QueryBody
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.registry import grants_of
from dreamer.kernel.install.views import agent_view, installed_agent, installed_agents
from dreamer.kernel.invocations.principal import Caller

router = APIRouter(prefix="/v1", tags=["agents"])


@router.post("/build")
async def build(request: Request, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Import a bundle's entry module in the sandbox and return its functions.json."""
    archive = await read_limited(request, k.settings.max_bundle_bytes)
    # The build's sandbox counts against the user's sandbox quotas while it runs.
    async with k.pool.scratch(who.user_name, k.settings.limits.address_space_mb):
        described = await k.installer.build(archive, who)
    if described and "input_schema" in described[0]:
        return {"format": 1, "tools": described}  # a tool bundle: its tools.json
    return {"format": 1, "functions": described}


@router.post("/test")
async def test_bundle(request: Request, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Run a bundle's own tests/ with pytest in the sandbox; answers {"passed", "exit_code", "output"}."""
    archive = await read_limited(request, k.settings.max_bundle_bytes)
    async with k.pool.scratch(who.user_name, k.settings.limits.address_space_mb):
        return await k.installer.test(archive, who)


@router.post("/bundles", status_code=201)
async def stage(request: Request, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Upload a bundle (.tar.gz); answers with the permission review. Nothing is granted yet."""
    archive = await read_limited(request, k.settings.max_bundle_bytes)
    async with k.pool.scratch(who.user_name, k.settings.limits.address_space_mb):  # describing it runs a sandbox
        return await k.installer.stage(who, archive)


@router.post("/agents", status_code=201)
async def install(body: InstallBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    if not body.approve:
        raise DreamerError("invalid_argument", "nothing was installed: the review was not approved")
    installed = await k.installer.approve(who, body.bundle_id, body.without, grant=body.grant)
    if isinstance(installed, dict):
        return installed  # a tool bundle: its view, as in GET /v1/tools
    with k.store.session() as s:
        return agent_view(installed, [g.scope for g in grants_of(s, who.user_id, installed.name)])


@router.get("/agents")
def agents(k: KernelDep, who: PrincipalDep) -> list[dict[str, Any]]:
    return installed_agents(k.store, who.user_id)


@router.get("/agents/{agent}")
def agent(agent: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    return installed_agent(k.store, who.user_id, agent)


@router.delete("/agents/{agent}")
async def uninstall(agent: str, k: KernelDep, who: PrincipalDep, purge: bool = False) -> dict[str, Any]:
    return await k.installer.uninstall(who, agent, purge)


@router.post("/agents/{agent}/rollback")
async def rollback(agent: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Back to the version before the latest upgrade, with the grants and the data it had then."""
    installed = await k.installer.rollback(who, agent)
    with k.store.session() as s:
        return agent_view(installed, [g.scope for g in grants_of(s, who.user_id, agent)])


@router.post("/agents/{agent}/functions/{function}")
async def call(agent: str, function: str, body: CallBody, k: KernelDep, who: PrincipalDep) -> CallResult:
    outcome = await k.invoker.invoke(who, agent, function, body.args, Caller("user", confirmed=body.confirm))
    return CallResult(result=outcome.value, invocation_id=outcome.invocation_id, status=outcome.status)


@router.post("/agents/{agent}/database")
async def database(agent: str, body: QueryBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Run one SQL statement on the agent's own database; a change needs confirm=true."""
    return await query_agent(k.store, k.installer.sandbox, k.settings, who, agent, body.query, write=body.confirm)
