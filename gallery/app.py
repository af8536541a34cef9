"""The gallery's HTTP API: a FastAPI app of its own (`dreamer gallery serve`), OpenAPI at /openapi.json.

Publishing is `PUT /v1/packages/{name}/{version}` with the archive as the body and
the signed claims in headers, so a client can stream the upload (and show progress)
without multipart encoding.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from dreamer.contracts.gallery_upload import Upload
from dreamer.gallery.rules import Gallery, GallerySettings
from dreamer.contracts.http import read_limited
from dreamer.contracts.http import install_handlers
from dreamer.contracts.errors import DreamerError
from fastapi import FastAPI, Header, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field

VERSION = "0.1.0"
Auth = Annotated[str | None, Header()]


class RegisterBody(BaseModel):
    name: str = Field(max_length=64)
    public_key: str = Field(max_length=200)


class YankBody(BaseModel):
    reason: str = Field(default="", max_length=500)
    undo: bool = False


def _token(authorization: str | None) -> str | None:
    scheme, _, token = (authorization or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _scopes(header: str | None) -> list[str]:
    try:
        value = json.loads(header or "")
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise DreamerError("invalid_request", "X-Dreamer-Scopes must be a JSON list of the bundle's scopes")
    return value


def create_app(settings: GallerySettings, gallery: Gallery | None = None) -> FastAPI:
    g = gallery or Gallery(settings)
    app = FastAPI(title="dreamer gallery", version=VERSION,
                  description="Signed agent and tool bundles: publish, search, download, yank.")
    install_handlers(app, service="gallery")
    app.state.gallery = g

    @app.get("/healthz")
    def health() -> dict[str, Any]:
        return {"ok": True, "version": VERSION, "service": "dreamer-gallery"}

    @app.post("/v1/publishers", status_code=201)
    def register(body: RegisterBody, x_dreamer_invite: Annotated[str | None, Header()] = None) -> dict[str, Any]:
        """Register a publisher name with its ed25519 public key; the answer holds its token (shown once)."""
        return g.register(body.name, body.public_key, x_dreamer_invite)

    @app.get("/v1/publishers/{name}")
    def publisher(name: str) -> dict[str, Any]:
        return g.publisher_page(name)

    @app.put("/v1/packages/{name}/{version}", status_code=201)
    async def publish(
        name: str, version: str, request: Request, authorization: Auth = None,
        x_dreamer_sha256: Annotated[str, Header()] = "", x_dreamer_signature: Annotated[str, Header()] = "",
        x_dreamer_scopes: Annotated[str | None, Header()] = None,
    ) -> dict[str, Any]:
        """Publish a signed version: the body is the .tar.gz; headers carry its sha256, signature and scopes."""
        token = _token(authorization)
        g.authenticate(token)  # before reading a large body from a stranger
        data = await read_limited(request, settings.max_archive_bytes)
        upload = Upload(name, version, x_dreamer_sha256.strip(), x_dreamer_signature.strip(), _scopes(x_dreamer_scopes))
        # Unpacking and hashing up to the size limit: off the event loop, so reads keep being served.
        return await asyncio.to_thread(g.publish, token, upload, data)

    @app.get("/v1/packages")
    def search(q: str = "", limit: int = 20) -> list[dict[str, Any]]:
        """Search (or, with no query, list) packages; yanked versions are not offered."""
        return g.search(q, limit)

    @app.get("/v1/packages/{name}")
    def package(name: str) -> dict[str, Any]:
        return g.package(name)

    @app.get("/v1/packages/{name}/{version}")
    def version(name: str, version: str) -> dict[str, Any]:
        return g.version(name, version)

    @app.get("/v1/packages/{name}/{version}/archive")
    def download(name: str, version: str) -> FileResponse:
        return FileResponse(g.archive_path(name, version), media_type="application/gzip",
                            filename=f"{name}-{version}.tar.gz")

    @app.post("/v1/packages/{name}/{version}/yank")
    def yank(name: str, version: str, body: YankBody, authorization: Auth = None) -> dict[str, Any]:
        return g.yank(_token(authorization), name, version, body.reason, body.undo)

    return app
