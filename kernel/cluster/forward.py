"""Node-to-node forwarding of a user's request to the node that holds the user's lease.

The forwarding node signs what it saw — method, path and query, the user, the fencing token
of the lease it found, its own name and the time — with an HMAC under a key every node
shares (`cluster_secrets`). The owner checks the signature, that the time is recent, and
that it holds that user's lease with exactly that token; the user's own credential rides
along unchanged and is checked by the owner as on any request. Bodies and answers are
streamed both ways, so chat's event streams work through a hop.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

from starlette.types import Receive

H_FROM = "x-dreamer-forwarded-from"
H_USER = "x-dreamer-placed-user"
H_FENCE = "x-dreamer-fence"
H_AT = "x-dreamer-forwarded-at"
H_SIG = "x-dreamer-forward-sig"
PLACEMENT_HEADERS = (H_FROM, H_USER, H_FENCE, H_AT, H_SIG)
MAX_AGE_S = 60.0  # a signed request older than this is refused (a replay, or clocks far apart)

# Hop-by-hop headers (RFC 9110 §7.6.1) and what httpx sets itself.
_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                  "transfer-encoding", "upgrade", "host", "content-length"})


@dataclass(frozen=True)
class Signed:
    origin: str
    user_id: int
    fence: int
    at: float


def _message(method: str, target: str, user_id: int, fence: int, origin: str, at: str) -> bytes:
    return "\n".join((method.upper(), target, str(user_id), str(fence), origin, at)).encode()


def sign(key: bytes, method: str, target: str, user_id: int, fence: int, origin: str) -> dict[str, str]:
    """The headers that make a forwarded request acceptable to the owner."""
    at = f"{time.time():.3f}"
    digest = hmac.new(key, _message(method, target, user_id, fence, origin, at), hashlib.sha256).hexdigest()
    return {H_FROM: origin, H_USER: str(user_id), H_FENCE: str(fence), H_AT: at, H_SIG: digest}


def verify(key: bytes, method: str, target: str, headers: Mapping[str, str]) -> Signed | str:
    """The signed facts, or a one-sentence reason the request is refused."""
    try:
        origin, at = headers[H_FROM], headers[H_AT]
        user_id, fence = int(headers[H_USER]), int(headers[H_FENCE])
        given = headers[H_SIG]
        sent = float(at)
    except (KeyError, ValueError):
        return "a forwarded request lacks its placement headers"
    want = hmac.new(key, _message(method, target, user_id, fence, origin, at), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, given):
        return "a forwarded request's signature does not match this installation's cluster key"
    if abs(time.time() - sent) > MAX_AGE_S:
        return f"a forwarded request is older than {MAX_AGE_S:.0f} s"
    return Signed(origin, user_id, fence, sent)


def outgoing_headers(raw: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    """The client's headers to pass on: end-to-end ones only, never placement headers it sent."""
    out = []
    for name, value in raw:
        lower = name.decode("latin-1").lower()
        if lower in _HOP or lower in PLACEMENT_HEADERS:
            continue
        out.append((lower, value.decode("latin-1")))
    return out


def answer_headers(raw: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    return [(n, v) for n, v in raw if n.decode("latin-1").lower() not in _HOP or n.lower() == b"content-length"]


async def body_chunks(receive: Receive) -> AsyncIterator[bytes]:
    """The request body as it arrives (an ASGI receive callable)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        chunk = message.get("body", b"")
        if chunk:
            yield chunk
        if not message.get("more_body", False):
            return


__all__ = ["PLACEMENT_HEADERS", "Signed", "answer_headers", "body_chunks", "outgoing_headers", "sign", "verify"]
