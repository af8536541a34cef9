"""Provider failures as one sentence each.

Both client libraries raise the same family of exceptions (timeout, connection,
status with a JSON body); streams may also surface raw transport errors or
malformed data. Everything becomes a DreamerError: `timeout` when the provider
was too slow, `model_error` for the rest. API keys never reach a message.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import httpx2

from dreamer.contracts.errors import DreamerError

MAX_DETAIL = 300


def where(base_url: str | None, default_host: str) -> str:
    if not base_url:
        return default_host
    parts = urlsplit(base_url)
    return parts.netloc or base_url


def clip(text: str, limit: int = MAX_DETAIL) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def detail_of(body: Any, fallback: str) -> str:
    """The provider's own explanation: {"error": {"message": ...}} in both wire formats."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return clip(error["message"])
        if isinstance(error, str):
            return clip(error)
    if isinstance(body, str) and body.strip():
        return clip(body)
    return clip(fallback)


def translate(
    exc: BaseException,
    *,
    library: Any,
    place: str,
    model: str,
    timeout: float,
    key_source: str | None,
) -> DreamerError:
    """Map an exception from `library` (the anthropic or openai module) or the transport."""
    if isinstance(exc, DreamerError):
        return exc
    if isinstance(exc, (library.APITimeoutError, httpx2.TimeoutException, TimeoutError)):
        return DreamerError("timeout", f"the model provider at {place} did not answer within {timeout:g} s")
    if isinstance(exc, library.APIStatusError):
        return _status_error(exc.status_code, detail_of(exc.body, exc.message), place, model, key_source)
    if isinstance(exc, (library.APIConnectionError, httpx2.TransportError)):
        cause = exc.__cause__ or exc
        reason = clip(str(cause) or type(cause).__name__, 160)
        return DreamerError("model_error", f"cannot reach the model provider at {place}: {reason}")
    if isinstance(exc, library.APIError):
        # An error event inside a stream, or an answer the library could not read.
        return DreamerError("model_error", f"the model provider at {place} failed: {detail_of(exc.body, exc.message)}")
    if isinstance(exc, (ValueError, json.JSONDecodeError, KeyError, TypeError, AttributeError)):
        return DreamerError("model_error", f"the model provider at {place} sent a malformed response: {clip(str(exc), 160)}")
    return DreamerError("model_error", f"the call to the model provider at {place} failed: {type(exc).__name__}")


def _status_error(status: int, detail: str, place: str, model: str, key_source: str | None) -> DreamerError:
    if status in (401, 403):
        key = f"check {key_source}" if key_source else "set DREAMER_LLM_API_KEY"
        return DreamerError("model_error", f"the model provider at {place} refused the API key ({status}): {detail}; {key}")
    if status == 404:
        return DreamerError("model_error", f"the model provider at {place} has no model {model!r} ({status}): {detail}")
    if status == 429:
        return DreamerError("model_error", f"the model provider at {place} is rate-limiting requests (429): {detail}")
    if status == 413:
        return DreamerError("payload_too_large", f"the model provider at {place} says the request is too large: {detail}")
    if 400 <= status < 500:
        return DreamerError("model_error", f"the model provider at {place} rejected the request ({status}): {detail}")
    return DreamerError("model_error", f"the model provider at {place} failed ({status}): {detail}")
