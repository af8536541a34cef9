"""The web app's place in the kernel: pages at /, their files at /static.

No build step: Jinja2 templates rendered by the kernel, a little plain JavaScript, one
stylesheet, all served from web/static (installations may be offline; nothing from a CDN).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles

from dreamer.kernel.errors import DreamerError
from dreamer.web.auth import NeedsSignIn
from dreamer.web.pages import error_page, router
from dreamer.web.render import HERE


def mount_web(app: FastAPI) -> None:
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    api_error = app.exception_handlers[DreamerError]

    @app.exception_handler(NeedsSignIn)
    async def needs_sign_in(_: Request, exc: NeedsSignIn) -> Response:
        return exc.response

    @app.exception_handler(DreamerError)
    async def dreamer_error(request: Request, exc: DreamerError) -> Response:
        # A page (not /v1) that fails shows a page; the API keeps its JSON errors.
        if request.url.path.startswith(("/v1", "/healthz", "/mcp", "/hooks")):
            return await api_error(request, exc)
        return error_page(request, exc)
