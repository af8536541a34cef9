"""Every error leaves the API as {"error": {"code", "message"}} — never a traceback."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from dreamer.kernel.errors import DreamerError

log = logging.getLogger("dreamer.api")


def _body(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(DreamerError)
    async def dreamer_error(_: Request, exc: DreamerError) -> JSONResponse:
        response = JSONResponse(exc.to_dict(), status_code=exc.status)
        return response

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        return _body("invalid_request", f"{where}: {first.get('msg', 'invalid')}", 400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "invalid_request", 401: "unauthorized", 413: "payload_too_large"}.get(exc.status_code, "invalid_request")
        return _body(code, str(exc.detail), exc.status_code)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return _body("internal", f"the kernel hit an unexpected error ({type(exc).__name__}); see the kernel log", 500)
