"""Errors an agent author meets, each with a stable `kind` the kernel understands.

`kind` uses the kernel's error codes (dreamer.contracts.errors.STATUS), so an error
that leaves agent code uncaught reaches the caller with the same code: a
`CallError("permission_denied", ...)` raised by `ctx.call` and not caught makes
the whole invocation fail with `permission_denied`, not with `agent_error`.
"""

from __future__ import annotations

from typing import Any

# The kinds a worker may report for an invocation. Anything else an agent raises
# with an unknown kind is reported as agent_error, so the kernel never sees a
# code it cannot map.
KINDS: frozenset[str] = frozenset(
    {
        "invalid_argument",
        "not_found",
        "agent_error",
        "import_error",
        "result_invalid",
        "permission_denied",
        "call_cycle",
        "depth_exceeded",
        "timeout",
        "not_available",
        "payload_too_large",
        "confirmation_required",
        "worker_crashed",
        "protocol_error",
        "sandbox_unavailable",
        "fetch_failed",
        "budget_exceeded",
        "model_error",
        "sql_refused",
        "sql_error",
        "conflict",
        "tool_disabled",
        "internal",
    }
)


class DreamerSDKError(Exception):
    """Base of every SDK error: a stable `kind` and one sentence in `message`."""

    def __init__(self, kind: str, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        # Extra detail sent along in the JSON-RPC error's `data` (never `kind`).
        self.data: dict[str, Any] = {k: v for k, v in (data or {}).items() if k != "kind"}

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.kind!r}, {self.message!r})"


class CallError(DreamerSDKError):
    """The kernel refused or failed a syscall made by agent code (e.g. `ctx.call`).

    Switch on `kind`: permission_denied, not_found, call_cycle, depth_exceeded,
    timeout, agent_error, invalid_argument, ...::

        try:
            ctx.call("recipes", "suggest", dish="soup")
        except CallError as e:
            if e.kind == "permission_denied":
                ...
    """


class NotAvailable(DreamerSDKError):
    """A Context member the design names but this installation does not provide yet."""

    def __init__(self, message: str) -> None:
        super().__init__("not_available", message)


class InvalidArgument(DreamerSDKError):
    """Arguments that do not match a function's parameters.

    The worker raises it before the function runs; agent code may raise it too
    to refuse a value its type hints cannot express ("quantity must be positive").
    """

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__("invalid_argument", message, data)


class ResultInvalid(DreamerSDKError):
    """A function returned a value that cannot be sent back as its declared result."""

    def __init__(self, message: str) -> None:
        super().__init__("result_invalid", message)


class DefinitionError(DreamerSDKError, TypeError):
    """`@function` was applied to something it cannot describe; raised at import."""

    def __init__(self, message: str) -> None:
        super().__init__("import_error", message)
