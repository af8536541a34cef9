"""Every refusal carries a stable code and one sentence: the one error type of dreamer.

The HTTP layer turns a DreamerError into {"error": {"code", "message"}} with the
status below; the CLI prints the message (or the JSON) and exits non-zero.
"""

from __future__ import annotations

# code -> HTTP status. Codes are part of the public contract: clients switch on them.
STATUS: dict[str, int] = {
    "unauthorized": 401,
    "forbidden": 403,
    "permission_denied": 403,
    "tool_disabled": 403,
    "csrf_failed": 403,  # a browser request without its session's CSRF token (web app)
    "not_found": 404,
    "conflict": 409,
    "invalid_argument": 422,
    "invalid_bundle": 422,
    "sql_refused": 422,  # kernel/data: not a read-only query within the user's scope
    "sql_error": 422,  # kernel/data: the database refused a query the guard let through
    "invalid_request": 400,
    "confirmation_required": 409,
    "call_cycle": 409,
    "depth_exceeded": 409,
    "payload_too_large": 413,
    "rate_limited": 429,  # too much of one thing in a short time (memory writes, sign-ins, event chains)
    "agent_error": 500,
    "import_error": 500,
    "result_invalid": 500,
    "worker_crashed": 502,
    "protocol_error": 502,
    "fetch_failed": 502,
    "tool_error": 502,
    "timeout": 504,
    "sandbox_unavailable": 503,
    "not_available": 501,
    "budget_exceeded": 402,
    "quota_exceeded": 429,  # a per-user quota (kernel/users/quotas.py): staging, data, feed, workers, queue
    "model_error": 502,
    "internal": 500,
    # the gallery (gallery/, kernel/install/gallery.py): a published bundle that fails its checks
    "signature_invalid": 422,
    "digest_mismatch": 422,
    "metadata_mismatch": 422,
    "gallery_unreachable": 502,
    # a cluster (kernel/cluster/placement.py): the user's node is gone and its lease not over yet
    # (Retry-After says when to ask again), or a forwarded request carried a stale fencing token
    "node_unavailable": 503,
    "stale_lease": 409,
}


class DreamerError(Exception):
    """A refusal or failure with a stable code and a message a person can act on."""

    def __init__(self, code: str, message: str, **details: object) -> None:
        super().__init__(message)
        self.code = code if code in STATUS else "internal"
        self.message = message
        self.details = details

    @property
    def status(self) -> int:
        return STATUS[self.code]

    def to_dict(self) -> dict[str, object]:
        body: dict[str, object] = {"code": self.code, "message": self.message}
        if self.details:
            body["details"] = self.details
        return {"error": body}
