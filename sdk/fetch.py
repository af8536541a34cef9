"""`ctx.fetch`: outbound HTTP, made by the kernel on the agent's behalf.

The sandbox has no network. The kernel makes the request (syscall `net.fetch`)
after checking the grant `net:<host>`, refuses private and loopback addresses
unless a grant names them, follows up to 5 redirects to granted hosts only, and
caps the response size and the time taken. Stdlib only: this runs in the sandbox.
"""

from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass
from typing import Any

from dreamer.sdk.errors import CallError

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
# The kernel's limit (kernel/net/policy.py): what always fits the worker channel.
MAX_BODY_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class Response:
    """What a server answered.

    Attributes:
        status: the HTTP status code (a 404 or 500 is a Response, not an error).
        headers: response headers, names in lowercase (repeated ones joined by ", ").
        content: the body as bytes.
        url: the final URL, after any redirects.
        elapsed_ms: how long the whole fetch took.
    """

    status: int
    headers: dict[str, str]
    content: bytes
    url: str
    elapsed_ms: int = 0

    @property
    def ok(self) -> bool:
        """Whether the status is 2xx."""
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        """The body as text: UTF-8, or the charset the server declared;
        undecodable bytes become U+FFFD."""
        charset = "utf-8"
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.content.decode(charset, "replace")
        except LookupError:
            return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body parsed as JSON (ValueError if it is not JSON)."""
        return json.loads(self.text)


def fetch_params(
    url: str, method: str, headers: dict[str, str] | None, body: str | bytes | bytearray | None,
    timeout: float, max_bytes: int | None,
) -> dict[str, Any]:
    """The net.fetch params; a TypeError or ValueError names the argument that is wrong."""
    if not isinstance(url, str):
        raise TypeError(f"ctx.fetch: url must be a string, not {type(url).__name__}")
    if not isinstance(method, str) or method.upper() not in METHODS:
        raise ValueError(f"ctx.fetch: method must be one of {', '.join(METHODS)}, not {method!r}")
    if headers is not None and (
        not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
    ):
        raise TypeError("ctx.fetch: headers must be a dict of strings to strings")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"ctx.fetch: timeout must be a positive number of seconds, not {timeout!r}")
    if max_bytes is not None and (isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0):
        raise ValueError(f"ctx.fetch: max_bytes must be a positive integer, not {max_bytes!r}")
    params: dict[str, Any] = {"url": url, "method": method.upper(), "timeout": float(timeout)}
    if headers:
        params["headers"] = dict(headers)
    if max_bytes is not None:
        params["max_bytes"] = max_bytes
    if body is None:
        return params
    if isinstance(body, str):
        size = len(body.encode("utf-8", "surrogatepass"))
        params["body"] = body
    elif isinstance(body, (bytes, bytearray)):
        size = len(body)
        params["body"] = {"base64": base64.b64encode(bytes(body)).decode("ascii")}
    else:
        raise TypeError(
            f"ctx.fetch: body must be str or bytes, not {type(body).__name__} (for JSON, pass json.dumps(value))"
        )
    if size > MAX_BODY_BYTES:
        # Checked here too: a message too large for the channel would end the worker.
        raise CallError("payload_too_large", f"ctx.fetch: the body is larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB")
    return params


def response_from(answer: Any, url: str) -> Response:
    """The kernel's answer as a Response; CallError(protocol_error) if it is malformed."""
    try:
        status, headers, body, final = answer["status"], answer["headers"], answer["body"], answer["url"]
        if not isinstance(status, int) or not isinstance(headers, dict) or not isinstance(final, str):
            raise TypeError
        content = body.encode("utf-8") if isinstance(body, str) else base64.b64decode(body["base64"], validate=True)
        return Response(status, {str(k): str(v) for k, v in headers.items()}, content, final, int(answer.get("elapsed_ms", 0)))
    except (KeyError, TypeError, ValueError):
        raise CallError("protocol_error", f"the kernel's answer to net.fetch of {url[:200]} is malformed") from None
