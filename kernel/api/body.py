"""Reading an uploaded body with a ceiling, before any of it is parsed."""

from __future__ import annotations

from fastapi import Request

from dreamer.kernel.errors import DreamerError


async def read_limited(request: Request, limit: int, *, empty_ok: bool = False, what: str | None = None) -> bytes:
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
