"""The web app's place in the kernel: pages at /, their files at /static.

No build step: Jinja2 templates rendered by the kernel, a little plain JavaScript, one
stylesheet, all served from web/static (installations may be offline; nothing from a CDN).
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from dreamer.contracts.errors import DreamerError
from dreamer.web.auth import NeedsSignIn, browser_session
from dreamer.web.pages import error_page, router
from dreamer.web.render import HERE

NOT_PAGES = ("/v1", "/healthz", "/mcp", "/hooks", "/static")
log = logging.getLogger("dreamer.web")
# When even the error page cannot be drawn (its template or the store failing too).
BARE = ("<!doctype html><html lang=en><meta charset=utf-8><title>Something went wrong · dreamer</title>"
        "<h1>Something went wrong</h1><p>The page could not be shown. Try again in a moment.</p><p><a href=/>Back to the chat</a></p>")


def _is_page(request: Request) -> bool:
    return not request.url.path.startswith(NOT_PAGES)


def _page_for(request: Request, exc: DreamerError) -> Response:
    """The error page, signed in when the request was (so it keeps its navigation)."""
    try:
        if getattr(request.state, "web_session", None) is None:
            request.state.web_session = browser_session(request)
        return error_page(request, exc)
    except Exception:
        log.exception("the error page itself failed for %s", request.url.path[:200])
        return HTMLResponse(BARE, status_code=exc.status, headers={"Cache-Control": "no-store"})


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

    api_invalid = app.exception_handlers[RequestValidationError]
    api_unexpected = app.exception_handlers[Exception]

    # A page (not /v1) that fails shows a page in words, whatever failed; the API keeps its JSON errors.
    @app.exception_handler(DreamerError)
    async def dreamer_error(request: Request, exc: DreamerError) -> Response:
        return _page_for(request, exc) if _is_page(request) else await api_error(request, exc)

    @app.exception_handler(StarletteHTTPException)
    async def http_problem(request: Request, exc: StarletteHTTPException) -> Response:
        # An address no route serves (404), a page asked with the wrong method (405).
        if not _is_page(request):
            return await http_error(request, exc)  # type: ignore[operator]
        if exc.status_code == 404:
            return _page_for(request, DreamerError("not_found", f"nothing is served at {request.url.path[:200]}"))
        return _page_for(request, DreamerError("invalid_request", str(exc.detail)[:300]))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        if not _is_page(request):
            return await api_invalid(request, exc)  # type: ignore[operator]
        return _page_for(request, DreamerError("invalid_request", "the address asks for something the page cannot read"))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        if not _is_page(request):
            return await api_unexpected(request, exc)  # type: ignore[operator]
        log.error("unexpected error on the page %s", request.url.path[:200], exc_info=exc)
        # No exception name or trace on the page: those are in the kernel's log for whoever runs it.
        return _page_for(request, DreamerError("internal", ""))
