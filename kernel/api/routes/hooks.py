"""POST /hooks/{token}: webhook triggers, the only route outside /v1's token auth
(see dreamer.kernel.triggers.webhook for what is checked, in what order)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from dreamer.contracts.http import read_limited
from dreamer.kernel.api.deps import KernelDep
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.triggers.webhook import check_signature, find_hook, request_payload

router = APIRouter(tags=["webhooks"])


@router.post("/hooks/{token}", status_code=202)
async def webhook(token: str, request: Request, k: KernelDep) -> dict[str, Any]:
    row = find_hook(k.store, token)
    limit = k.settings.webhook_max_bytes
    body = await read_limited(request, limit, empty_ok=True, what=f"a webhook body may be at most {limit // 1024} KiB")
    headers = {key.lower(): value for key, value in request.headers.items()}
    check_signature(row, headers, body)
    if row.paused:
        raise DreamerError("conflict", "this webhook's trigger is paused; its owner can resume it")
    payload = request_payload(request.method, headers, request.url.query, body)
    outcome = await k.triggers.fire(row, payload)
    return {"invocation_id": outcome.invocation_id, "status": outcome.status}
