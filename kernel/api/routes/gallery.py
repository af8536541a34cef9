"""Installing from galleries: search them, and stage a package for the usual review."""

from __future__ import annotations

from typing import Any

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.contracts.manifest import NAME_RE, SEMVER_RE
from dreamer.kernel.install.gallery import GalleryInstaller
from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

router = APIRouter(prefix="/v1/gallery", tags=["gallery"])


class GalleryInstallBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=NAME_RE)
    version: str | None = Field(default=None, pattern=SEMVER_RE)
    accept_new_key: bool = False


@router.get("")
def galleries(k: KernelDep, _: PrincipalDep) -> dict[str, Any]:
    return {"galleries": list(k.settings.galleries)}


@router.get("/search")
async def search(k: KernelDep, _: PrincipalDep, q: str = "", limit: int = 20) -> list[dict[str, Any]]:
    return await GalleryInstaller(k.settings, k.installer, k.gallery).search(q, max(1, min(limit, 100)))


@router.get("/outdated")
async def outdated(k: KernelDep, who: PrincipalDep) -> list[dict[str, Any]]:
    """Agents installed from a gallery that offers a newer version: [{"name", "installed", "latest", "gallery"}]."""
    return await GalleryInstaller(k.settings, k.installer, k.gallery).outdated(who)


@router.post("/install", status_code=201)
async def install(body: GalleryInstallBody, k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Download, verify and stage a package; answers like POST /v1/bundles. Nothing is granted yet."""
    return await GalleryInstaller(k.settings, k.installer, k.gallery).stage(who, body.name, body.version, body.accept_new_key)
