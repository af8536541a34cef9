"""The retry policy of background invocations.

A background function declares `retries=N` (functions.json `retries`): at most
1 + N attempts. An attempt that fails with a code below, or that a dying kernel
interrupted, is queued again after a delay that doubles each time; a refusal
(permission_denied, invalid_argument, not_found, ...) would fail the same way
again, so it fails the invocation at once.
"""

from __future__ import annotations

from datetime import timedelta

RETRIABLE = frozenset(
    {"agent_error", "worker_crashed", "timeout", "protocol_error", "fetch_failed", "model_error", "interrupted", "internal"}
)
FIRST_DELAY_S = 1.0
MAX_DELAY_S = 300.0


def retry_delay(attempt: int, first: float = FIRST_DELAY_S) -> timedelta:
    """How long after failed attempt number `attempt` (1, 2, ...) the next one may start."""
    return timedelta(seconds=min(MAX_DELAY_S, first * 2 ** max(0, attempt - 1)))
