"""Data connections (issue 6): an administrator declares them; agents query them through syscalls."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from dreamer.kernel.api.deps import AdminDep, KernelDep, PrincipalDep
from dreamer.kernel.data.export import export

router = APIRouter(prefix="/v1/data", tags=["data"])


class ConnectionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=64)
    url: str = Field(max_length=2000)
    scopes: str = Field(default="", max_length=256_000)
    description: str = Field(default="", max_length=2000)
    schema_name: str | None = Field(default=None, alias="schema", max_length=128)


class ScopesBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scopes: str = Field(max_length=256_000)


@router.get("")
def list_connections(k: KernelDep, who: AdminDep) -> list[dict[str, Any]]:
    """Every data connection (URLs without passwords)."""
    return k.data.list()


@router.post("", status_code=201)
async def add_connection(body: ConnectionBody, k: KernelDep, who: AdminDep) -> dict[str, Any]:
    """Declare a connection; PostgreSQL gets its reader role and policies here."""
    return await asyncio.to_thread(k.data.add, body.name, body.url, body.scopes, body.description, body.schema_name)


@router.put("/{name}/scopes")
async def set_scopes(name: str, body: ScopesBody, k: KernelDep, who: AdminDep) -> dict[str, Any]:
    """Replace the role scopes file with a higher version of it."""
    return await asyncio.to_thread(k.data.set_scopes, name, body.scopes)


@router.delete("/{name}")
async def remove_connection(name: str, k: KernelDep, who: AdminDep) -> dict[str, Any]:
    return await asyncio.to_thread(k.data.remove, name)


@router.get("/results/{query_id}/export")
async def export_result(query_id: str, k: KernelDep, who: PrincipalDep,
                        format: str = Query(default="xlsx", max_length=8)) -> Response:
    """Download a whole query result as CSV or XLSX: only the caller's own results exist for them."""
    result = k.data.results.get(query_id[:64], who.user_id)
    body, media = await asyncio.to_thread(export, result, format)
    filename = f"{result.id}.{format}"
    return Response(body, media_type=media, headers={"Content-Disposition": f'attachment; filename="{filename}"'})
