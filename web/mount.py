"""The web app's place in the kernel: pages at /, their files at /static.

No build step: Jinja2 templates rendered by the kernel, a little plain JavaScript, one
stylesheet, all served from web/static (installations may be offline; nothing from a CDN).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from dreamer.contracts.errors import DreamerError
from dreamer.web.auth import NeedsSignIn, browser_session
from dreamer.web.pages import error_page, router
from dreamer.web.render import HERE

NOT_PAGES = ("/v1", "/healthz", "/mcp", "/hooks", "/static")


def mount_web(app: FastAPI) -> None:
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    api_error = app.exception_handlers[DreamerError]
    http_error = app.exception_handlers.get(StarletteHTTPException, http_exception_handler)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        # Browsers ask for it before reading the page's <link rel="icon">.
        return FileResponse(HERE / "static" / "icon.svg", media_type="image/svg+xml")

    @app.exception_handler(NeedsSignIn)
    async def needs_sign_in(_: Request, exc: NeedsSignIn) -> Response:
        return exc.response

    @app.exception_handler(DreamerError)
    async def dreamer_error(request: Request, exc: DreamerError) -> Response:
        # A page (not /v1) that fails shows a page; the API keeps its JSON errors.
        if request.url.path.startswith(NOT_PAGES):
            return await api_error(request, exc)
        return error_page(request, exc)

    @app.exception_handler(StarletteHTTPException)
    async def no_such_page(request: Request, exc: StarletteHTTPException) -> Response:
        # An address no route serves: a page in words for a person, JSON for programs.
        if exc.status_code != 404 or request.url.path.startswith(NOT_PAGES):
            return await http_error(request, exc)  # type: ignore[operator]
        if getattr(request.state, "web_session", None) is None:
            request.state.web_session = browser_session(request)  # signed in: the page keeps its navigation
        return error_page(request, DreamerError("not_found", f"nothing is served at {request.url.path[:200]}"))
