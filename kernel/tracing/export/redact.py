"""Secrets never leave in an export: every string of a record is scrubbed before it is
written.

Three nets, because a secret can sit anywhere an agent or a model put it:
- the values the kernel itself holds as secrets for the user (trigger secrets and webhook
  tokens, tool servers' headers, data connections' credentials, the model provider's key),
  replaced wherever they appear;
- the shapes credentials have (dreamer API tokens, `Bearer ...`, provider keys, private
  keys, JWTs), one pattern without nested repetition, so a long string costs one pass;
- keys that name a credential (`password`, `api_key`, `authorization`, `*_token`, ...),
  whose whole value goes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

REDACTED = "[redacted]"
MIN_KNOWN_CHARS = 8  # shorter "secrets" would redact ordinary words

_SHAPES = "|".join((
        r"drm_[A-Za-z0-9_\-]{16,}",  # dreamer API tokens (kernel/users/accounts.py TOKEN_PREFIX)
        r"\bsk-[A-Za-z0-9_\-]{16,}",  # OpenAI / Anthropic keys
        r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
        r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack tokens
        r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key ids
        r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWTs
        r"(?i:\bbearer[ \t]+)[A-Za-z0-9._~+/\-]+=*",
        r"(?i:\bbasic[ \t]+)[A-Za-z0-9+/]{12,}=*",
        r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[^-]*-----END [A-Z ]{0,40}PRIVATE KEY-----",
))
_SHORTEST = MIN_KNOWN_CHARS  # no shape above and no known secret is shorter: shorter strings are kept as they are

_SECRET_KEYS = frozenset({
    "password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "proxy_authorization",
    "cookie", "set_cookie", "credential", "credentials", "private_key", "x_api_key", "client_secret",
})
_SECRET_SUFFIXES = ("_token", "_secret", "_password", "_api_key", "_apikey", "_credential")


@lru_cache(maxsize=4096)
def secret_key(key: str) -> bool:
    k = key.lower().replace("-", "_")
    return k in _SECRET_KEYS or k.endswith(_SECRET_SUFFIXES)


class Redactor:
    """Scrubs JSON values; `known` are exact secret values to take out wherever they appear."""

    def __init__(self, known: Iterable[str] = ()) -> None:
        values = sorted({v for v in known if isinstance(v, str) and len(v) >= MIN_KNOWN_CHARS}, key=len, reverse=True)
        # One alternation, known values first (longest first), so each string is read once.
        self._pattern = re.compile("|".join([*(re.escape(v) for v in values), _SHAPES]))

    def text(self, value: str) -> str:
        if len(value) < _SHORTEST:
            return value
        return self._pattern.sub(REDACTED, value)

    def value(self, value: Any) -> Any:
        """A scrubbed copy of a JSON value (dicts, lists, strings, numbers)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                self.text(str(k)): (REDACTED if secret_key(str(k)) and value[k] not in (None, "") else self.value(v))
                for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value
