"""What a stranger can make a sign-in cost: bounded per client, per account and in total.

- The password check (argon2, ~50 ms of a core) runs in a thread, never on the event
  loop, and at most `CONCURRENT_CHECKS` at once; an attempt that would wait behind more
  than `QUEUED_CHECKS` others is refused at once (429), so a flood cannot queue work.
- Failures are counted per client address and per account name. Past `FREE_FAILURES`
  within `WINDOW_S`, that client (or account) must wait, the wait doubling with each
  further failure up to `MAX_BACKOFF_S`; an attempt during the wait is refused without
  a password check.
- The audit log gets one entry per failure only for the first `FREE_FAILURES` of a
  window, then one `sessions.locked` entry when a wait begins: a flood writes a bounded
  number of rows. The actor names an existing account only, never the name typed.
- The sign-in form's CSRF token is `nonce.issued.mac`, an HMAC with a key the kernel
  keeps in memory, bound to the browser's user agent, valid for an hour: an
  attacker who sets the cookie and the field to one value of their choosing is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")

CONCURRENT_CHECKS = 2
QUEUED_CHECKS = 8
FREE_FAILURES = 5
WINDOW_S = 15 * 60.0
FIRST_BACKOFF_S = 2.0
MAX_BACKOFF_S = 15 * 60.0
TOKEN_TTL_S = 3600.0
MAX_TRACKED = 10_000  # clients and accounts remembered; the oldest are forgotten first
AUDITS_PER_MINUTE = 60  # failed sign-ins written to the audit log, from all clients together


class SignInRefused(Exception):
    """Refused before any password check: too many attempts (`retry_after` seconds)."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.message, self.retry_after = message, retry_after


@dataclass
class _Failures:
    count: int = 0
    first_at: float = 0.0
    locked_until: float = 0.0


@dataclass
class SignInGuard:
    clock: Callable[[], float] = time.monotonic
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    _clients: OrderedDict[str, _Failures] = field(default_factory=OrderedDict)
    _accounts: OrderedDict[str, _Failures] = field(default_factory=OrderedDict)
    _checks: asyncio.Semaphore | None = None
    _waiting: int = 0
    _audit_window: float = 0.0
    _audited: int = 0

    # -- the form token ------------------------------------------------------------------

    def new_token(self, user_agent: str) -> str:
        nonce, issued = secrets.token_urlsafe(16), str(int(time.time()))
        return f"{nonce}.{issued}.{self._mac(nonce, issued, user_agent)}"

    def issued_here(self, token: str, user_agent: str) -> bool:
        """Whether this kernel issued `token` to this browser within the hour."""
        parts = token.split(".")
        if len(parts) != 3 or not parts[1].isdigit():
            return False
        nonce, issued, mac = parts
        if not hmac.compare_digest(mac.encode(), self._mac(nonce, issued, user_agent).encode()):
            return False
        return 0 <= time.time() - int(issued) <= TOKEN_TTL_S

    def token_ok(self, cookie: str, offered: str, user_agent: str) -> bool:
        """The double submit, of a token this kernel issued to this browser within the hour."""
        if not cookie or not hmac.compare_digest(cookie.encode(), offered.encode()):
            return False
        return self.issued_here(cookie, user_agent)

    def _mac(self, nonce: str, issued: str, user_agent: str) -> str:
        message = f"{nonce}|{issued}|{user_agent[:512]}".encode()
        return hmac.new(self.key, message, hashlib.sha256).hexdigest()[:32]

    # -- attempts ------------------------------------------------------------------------

    def admit(self, client: str, account: str) -> None:
        """Raise SignInRefused while this client or account must wait."""
        now = self.clock()
        for table, key, what in ((self._clients, client, "from your address"), (self._accounts, account, "for that account")):
            entry = table.get(key)
            if entry is not None and entry.locked_until > now:
                wait = entry.locked_until - now
                raise SignInRefused(
                    f"Too many failed sign-ins {what}; try again in {max(1, round(wait))} seconds.", wait
                )

    def failed(self, client: str, account: str) -> tuple[bool, bool]:
        """Count a failure. Returns (audit this failure, a wait began now)."""
        now = self.clock()
        audit_it, locked = False, False
        for table, key in ((self._clients, client), (self._accounts, account)):
            entry = table.get(key)
            if entry is None or now - entry.first_at > WINDOW_S:
                entry = _Failures(first_at=now)
            entry.count += 1
            table[key] = entry
            table.move_to_end(key)
            while len(table) > MAX_TRACKED:
                table.popitem(last=False)
            if entry.count <= FREE_FAILURES:
                audit_it = True
            else:
                locked = locked or entry.count == FREE_FAILURES + 1
                entry.locked_until = now + min(MAX_BACKOFF_S, FIRST_BACKOFF_S * 2 ** (entry.count - FREE_FAILURES - 1))
        # And in total: many addresses and names together still write a bounded number of rows.
        if now - self._audit_window > 60:
            self._audit_window, self._audited = now, 0
        if (audit_it or locked) and self._audited >= AUDITS_PER_MINUTE:
            return False, False
        self._audited += int(audit_it or locked)
        return audit_it, locked

    def succeeded(self, client: str, account: str) -> None:
        self._accounts.pop(account, None)
        self._clients.pop(client, None)

    async def check(self, work: Callable[[], T]) -> T:
        """Run one password check in a thread, a few at a time; refuse when too many wait."""
        if self._checks is None:
            self._checks = asyncio.Semaphore(CONCURRENT_CHECKS)
        if self._waiting >= CONCURRENT_CHECKS + QUEUED_CHECKS:
            raise SignInRefused("The kernel is busy with other sign-ins; try again in a few seconds.", 2.0)
        self._waiting += 1
        try:
            async with self._checks:
                return await asyncio.to_thread(work)
        finally:
            self._waiting -= 1
