"""Webhook triggers: POST /hooks/{token}, outside the /v1 token auth.

The URL is the credential: a 256-bit random token per (user, agent, trigger),
looked up by its unique index. The body is read with a ceiling before anything
parses it. When the user set a secret, the request must carry an HMAC-SHA256 of
the raw body with it (`X-Dreamer-Signature: sha256=<hex>`, or GitHub's
`X-Hub-Signature-256`), compared in constant time. What reaches the entrypoint is
the method, a short list of headers (never cookies or authorization), the query
string and the body (text, and parsed JSON when it is JSON).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from typing import Any

from sqlalchemy import select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Trigger

SIGNATURE_HEADERS = ("x-dreamer-signature", "x-hub-signature-256")
PASSED_HEADERS = ("content-type", "user-agent")
MAX_HEADERS = 30
MAX_HEADER_CHARS = 1000
TOKEN_RE = r"[A-Za-z0-9_-]{20,64}"


def find_hook(store: Store, token: str) -> Trigger:
    """The webhook trigger a token names; one answer for every wrong token."""
    row = None
    if re.fullmatch(TOKEN_RE, token):
        with store.session() as s:
            row = s.scalar(select(Trigger).where(Trigger.token == token, Trigger.type == "webhook"))
            if row is not None:
                s.expunge(row)
    if row is None or not hmac.compare_digest((row.token or "").encode(), token.encode()):
        raise DreamerError("not_found", "no webhook answers at this address; `dreamer triggers` shows your webhook URLs")
    return row


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def check_signature(row: Trigger, headers: dict[str, str], body: bytes) -> None:
    if not row.secret:
        return
    given = next((headers[h] for h in SIGNATURE_HEADERS if h in headers), None)
    if not given:
        raise DreamerError("unauthorized", "this webhook needs a signature: send X-Dreamer-Signature: sha256=<HMAC-SHA256 of the body with the secret>")
    if not hmac.compare_digest(given.strip().lower().encode(), sign(row.secret, body).encode()):
        raise DreamerError("unauthorized", "the webhook signature does not match the body; sign the exact bytes sent with the secret you set")


def request_payload(method: str, headers: dict[str, str], query: str, body: bytes) -> dict[str, Any]:
    """What the entrypoint receives as its argument."""
    passed = {k: v[:MAX_HEADER_CHARS] for k, v in headers.items() if k in PASSED_HEADERS or (
        k.startswith("x-") and k not in SIGNATURE_HEADERS
    )}
    passed = dict(list(passed.items())[:MAX_HEADERS])
    text = body.decode("utf-8", errors="replace")
    parsed: Any = None
    if "json" in headers.get("content-type", ""):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
    return {"method": method, "headers": passed, "query": query[:MAX_HEADER_CHARS], "body": text, "json": parsed}
