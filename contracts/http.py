"""What every dreamer HTTP server (the kernel's API, the gallery) shares: request bodies
read with a ceiling, and errors that leave as {"error": {"code", "message"}}, never a traceback."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from dreamer.contracts.errors import DreamerError

_STATUS_CODES = {404: "not_found", 405: "invalid_request", 401: "unauthorized", 413: "payload_too_large"}


async def read_limited(request: Request, limit: int, *, empty_ok: bool = False, what: str | None = None) -> bytes:
    """The whole body, refused as soon as it passes `limit` (before any of it is parsed)."""
    too_large = what or f"the upload is larger than {limit // (1024 * 1024)} MiB"
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise DreamerError("payload_too_large", too_large)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise DreamerError("payload_too_large", too_large)
        chunks.append(chunk)
    if not size and not empty_ok:
        raise DreamerError("invalid_bundle", "the upload is empty; send the bundle as a .tar.gz body")
    return b"".join(chunks)


def _body(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def install_handlers(app: FastAPI, *, service: str = "kernel") -> None:
    """Map every exception to the error envelope; `service` names the server in the
    sentence an unexpected error gets ("the gallery hit an unexpected error ...")."""
    log = logging.getLogger(f"dreamer.{service}")

    @app.exception_handler(DreamerError)
    async def dreamer_error(_: Request, exc: DreamerError) -> JSONResponse:
        return JSONResponse(exc.to_dict(), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        return _body("invalid_request", f"{where}: {first.get('msg', 'invalid')}", 400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _STATUS_CODES.get(exc.status_code, "invalid_request")
        return _body(code, str(exc.detail), exc.status_code)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return _body("internal", f"the {service} hit an unexpected error ({type(exc).__name__}); see the {service} log", 500)
