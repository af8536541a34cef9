"""/v1/traces: the training export (issue 20) and each user's choice to stay out of it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict

from dreamer.kernel.api.deps import KernelDep, PrincipalDep
from dreamer.kernel.store.models import User
from dreamer.kernel.tracing.export import FORMATS, export_lines, exportees, known_secrets, opted_out, parse_since, set_opted_out
from dreamer.kernel.tracing.export.exporter import check_format

router = APIRouter(prefix="/v1/traces", tags=["traces"])

MEDIA = {"agentlightning": "application/x-ndjson", "otlp": "application/x-ndjson", "triplets": "application/x-ndjson"}


class ExportSetting(BaseModel):
    model_config = ConfigDict(extra="forbid")

    opt_out: bool


@router.get("/export")
def export(
    k: KernelDep,
    who: PrincipalDep,
    format: str = Query("agentlightning", description=f"one of {', '.join(FORMATS)}"),
    since: str | None = Query(None, description="7d, 24h, 30m, or an ISO date or date-time"),
    all_users: bool = Query(False, description="every user's traces (the administrator only)"),
) -> StreamingResponse:
    """The user's traces as JSON lines: Agent Lightning v1 rollouts with their events, OTLP/JSON
    spans with Agent Lightning's attributes, or (prompt, response, reward, metadata) triplets.
    Secrets are taken out; a user who opted out is in no export."""
    fmt = check_format(format)
    start = parse_since(since)
    with k.store.session() as s:
        user = s.get(User, who.user_id)
        acting_admin = who.via is None and user is not None and user.is_admin
    users = exportees(k.store, who.user_id, acting_admin=acting_admin, all_users=all_users)
    k.flush_traces()  # the latest finished spans are in the store before it is read
    api_key = k.llm.config.api_key if k.llm is not None else None
    secrets = known_secrets(k.store, [api_key] if api_key else [])
    # A plain iterator: Starlette runs it in a worker thread, off the event loop, one line at a time.
    lines = export_lines(k.store, users, fmt, start, secrets)
    return StreamingResponse(lines, media_type=MEDIA[fmt], headers={"Content-Disposition": f'attachment; filename="traces-{fmt}.jsonl"'})


@router.get("/export/setting")
def get_setting(k: KernelDep, who: PrincipalDep) -> dict[str, Any]:
    """Whether this user keeps their traces out of training exports."""
    return {"user": who.user_name, "opt_out": opted_out(k.store, who.user_id)}


@router.put("/export/setting")
def put_setting(k: KernelDep, who: PrincipalDep, body: ExportSetting) -> dict[str, Any]:
    """Opt out of (or back into) training exports; opting out also stops keeping new prompts for them."""
    return {"user": who.user_name, "opt_out": set_opted_out(k.store, who.user_id, body.opt_out)}
