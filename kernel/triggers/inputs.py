"""Input triggers: what the user shares (text, a URL, a file) goes to the agents whose
input trigger accepts its content type (POST /v1/inputs, `dreamer share`)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlalchemy import select

from dreamer.contracts.errors import DreamerError
from dreamer.contracts.triggers import check_content_type, content_type_matches
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import Trigger

MAX_FILE_BYTES = 1024 * 1024


class SharedFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=255)
    content_type: str = Field(default="application/octet-stream", max_length=255)
    base64: str = Field(max_length=(MAX_FILE_BYTES * 4) // 3 + 8)


class InputBody(BaseModel):
    """Exactly one of text, url, file; `agent` sends it to that agent only."""

    model_config = ConfigDict(extra="forbid")
    text: str | None = Field(default=None, max_length=100_000)
    url: str | None = Field(default=None, max_length=4000)
    file: SharedFile | None = None
    agent: str | None = Field(default=None, max_length=64)

    @model_validator(mode="after")
    def _one(self) -> "InputBody":
        given = [x for x in (self.text, self.url, self.file) if x is not None]
        if len(given) != 1:
            raise ValueError("share exactly one of text, url or file")
        return self


def content_of(body: InputBody) -> tuple[str, dict[str, Any]]:
    """(content type, the payload the entrypoint receives)."""
    if body.text is not None:
        return "text/plain", {"content_type": "text/plain", "text": body.text}
    if body.url is not None:
        if not body.url.startswith(("http://", "https://")):
            raise DreamerError("invalid_argument", "a shared URL must start with http:// or https://")
        return "text/uri-list", {"content_type": "text/uri-list", "url": body.url}
    assert body.file is not None
    try:
        kind = check_content_type(body.file.content_type.split(";")[0])
    except ValueError as exc:
        raise DreamerError("invalid_argument", str(exc)) from None
    try:
        size = len(base64.b64decode(body.file.base64, validate=True))
    except (binascii.Error, ValueError):
        raise DreamerError("invalid_argument", "the shared file's base64 is not valid base64") from None
    if size > MAX_FILE_BYTES:
        raise DreamerError("payload_too_large", f"a shared file may be at most {MAX_FILE_BYTES // 1024} KiB")
    return kind, {"content_type": kind, "file": {"name": body.file.name, "size": size, "base64": body.file.base64}}


def accepts(content_types: list[str] | None, content_type: str) -> bool:
    return any(content_type_matches(p, content_type) for p in content_types or [])


def receivers(store: Store, user_id: int, agent: str | None, content_type: str) -> list[Trigger]:
    """The user's running input triggers (only `agent`'s when given) that accept the content
    type, by agent and name; detached from the session, ready to fire."""
    with store.session() as s:
        q = select(Trigger).where(Trigger.user_id == user_id, Trigger.type == "input", Trigger.paused.is_(False))
        if agent:
            q = q.where(Trigger.agent == agent)
        rows = [t for t in s.scalars(q.order_by(Trigger.agent, Trigger.name)) if accepts(t.content_types, content_type)]
        for row in rows:
            s.expunge(row)
    return rows
