"""/v1/tools: the user's tool servers, their tools, calls, switches and remote headers."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.tools.gateway import read_gateway_settings, write_gateway_settings
from dreamer.kernel.tools.install import ToolInstaller
from dreamer.kernel.tools.registry import Caller, ToolRegistry

router = APIRouter(prefix="/v1", tags=["tools"])


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCallBody(_Body):
    args: dict[str, Any] = Field(default_factory=dict)


class SwitchBody(_Body):
    enabled: bool


class GatewayBody(_Body):
    expose_confirm: bool


class HeadersBody(_Body):
    headers: dict[str, str] = Field(default_factory=dict)


def _parts(k: Any) -> tuple[ToolRegistry, ToolInstaller]:
    if k.tools is None or k.installer.tools is None:
        raise DreamerError("not_available", "this kernel has no tool registry")
    return k.tools, k.installer.tools


@router.get("/tools")
def tools(k: KernelDep, who: PrincipalDep) -> list[dict[str, Any]]:
    registry, _ = _parts(k)
    return [inst.view() for inst in registry.installed_all(who.user_id)]


@router.get("/tools/{server}")
def tool_server(server: str, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    registry, _ = _parts(k)
    return registry.installed(who.user_id, server).view()


@router.delete("/tools/{server}")
async def uninstall_tool(server: str, k: KernelDep, who: PrincipalDep, purge: bool = False) -> dict[str, Any]:
    _, installer = _parts(k)
    return await installer.uninstall(who, server, purge)


@router.post("/tools/{server}/{tool}")
async def call_tool(server: str, tool: str, body: ToolCallBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Call one tool as the user (no agent grant is involved: it is the user's own tool)."""
    registry, _ = _parts(k)
    value = await registry.call(who.user_id, who.user_name, f"{server}.{tool}", body.args, Caller(actor=who.actor))
    return {"result": value, "tool": f"{server}.{tool}"}


@router.put("/tools/{server}/{tool}/enabled")
async def switch_tool(server: str, tool: str, body: SwitchBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    _, installer = _parts(k)
    return await installer.switch(who, f"{server}.{tool}", body.enabled)


@router.put("/tools/{server}/headers")
async def set_headers(server: str, body: HeadersBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    _, installer = _parts(k)
    return await installer.set_headers(who, server, body.headers)


@router.get("/gateway")
def gateway_settings(k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """The MCP gateway's settings for this user (/mcp)."""
    return read_gateway_settings(k.settings.users_dir, who.user_name)


@router.put("/gateway")
def set_gateway_settings(body: GatewayBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Opt in (or out) of exposing functions marked confirm=True to MCP clients."""
    from dreamer.kernel.audit.log import append as audit

    answer = write_gateway_settings(k.settings.users_dir, who.user_name, body.expose_confirm)
    with k.store.session() as s:
        audit(s, user_id=who.user_id, actor=who.actor, action="gateway.settings", target="mcp",
              decision="allow", detail=answer)
    return answer
