"""`dreamer traces export` inside the kernel: who may export whose traces, and the stream.

Whose: a user exports their own; the administrator (signed in as themselves, not acting
for someone) may export everyone's. A user who opted out is in nobody's export, and
their own request is refused with how to opt back in. The checks all run before the
first byte, so a refused export writes nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import make_url

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.db import Store
from dreamer.kernel.store.models import DataConnection, ToolInstallation, Trigger, User
from dreamer.kernel.tracing.export import agentlightning, otlp, triplets
from dreamer.kernel.tracing.export.redact import Redactor
from dreamer.kernel.tracing.export.rollouts import rollouts

FORMATS = ("agentlightning", "otlp", "triplets")
OPT_BACK_IN = "turn it back on with `dreamer traces opt-in`"
_RELATIVE = re.compile(r"([0-9]{1,6})([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


@dataclass(frozen=True)
class Exportee:
    user_id: int
    name: str


def parse_since(text: str | None, now: datetime | None = None) -> datetime | None:
    """`7d`, `24h`, `30m`, `2w` back from now, or an ISO date or date-time (UTC unless it says)."""
    if text is None or not text.strip():
        return None
    text = text.strip()
    now = now or datetime.now(timezone.utc)
    relative = _RELATIVE.fullmatch(text)
    if relative:
        try:
            return now - timedelta(**{_UNITS[relative.group(2)]: int(relative.group(1))})
        except OverflowError:
            return datetime.min.replace(tzinfo=timezone.utc)  # further back than any date: everything
    try:
        when = datetime.fromisoformat(text) if "T" in text or " " in text else datetime.combine(date.fromisoformat(text), datetime.min.time())
    except ValueError:
        raise DreamerError(
            "invalid_argument", f"--since must be like 7d, 24h, 30m or an ISO date such as 2026-01-31, not {text[:40]!r}"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise DreamerError("invalid_argument", f"unknown export format {fmt[:40]!r}; use one of {', '.join(FORMATS)}")
    return fmt


def exportees(store: Store, user_id: int, *, acting_admin: bool, all_users: bool) -> list[Exportee]:
    """Whose traces this request may export. `acting_admin`: the requester is the administrator
    signed in as themselves (not an administrator acting for another user)."""
    with store.session() as s:
        if all_users:
            if not acting_admin:
                raise DreamerError("forbidden", "only the administrator may export every user's traces")
            rows = s.execute(select(User.id, User.name).where(User.export_opt_out.is_(False)).order_by(User.id)).all()
            return [Exportee(r.id, r.name) for r in rows]
        user = s.get(User, user_id)
        if user is None:
            raise DreamerError("not_found", "no such user")
        if user.export_opt_out:
            raise DreamerError("conflict", f"{user.name} turned training export off, so nothing is exported; {OPT_BACK_IN}")
        return [Exportee(user.id, user.name)]


def known_secrets(store: Store, extra: Iterable[str] = ()) -> list[str]:
    """Every secret value the kernel holds, to take out of exports wherever it appears."""
    found: list[str] = [v for v in extra if v]
    with store.session() as s:
        for secret, token in s.execute(select(Trigger.secret, Trigger.token)):
            found.extend(v for v in (secret, token) if v)
        for (headers,) in s.execute(select(ToolInstallation.headers)):
            for value in (headers or {}).values():
                if isinstance(value, str):
                    found.append(value)
                    found.extend(part for part in value.split() if len(part) >= 8)  # "Bearer xyz": xyz alone too
        for url, secrets in s.execute(select(DataConnection.url, DataConnection.secrets)):
            found.append(url)
            try:
                password = make_url(url).password
            except Exception:  # noqa: BLE001 - a URL the engine cannot read has no password to find
                password = None
            if password:
                found.append(str(password))
            found.extend(str(v) for v in (secrets or {}).values() if isinstance(v, str))
    return found


def _dump(record: Any) -> bytes:
    return json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str).encode() + b"\n"


def export_lines(
    store: Store, users: list[Exportee], fmt: str, since: datetime | None = None, secrets: Iterable[str] = ()
) -> Iterator[bytes]:
    """The export as JSON lines, one rollout (or triplet) at a time."""
    check_format(fmt)
    scrub = Redactor(secrets)
    for user in users:
        for rollout in rollouts(store, user.user_id, user.name, since):
            if fmt == "agentlightning":
                yield _dump(agentlightning.record(rollout, scrub))
            elif fmt == "otlp":
                yield _dump(otlp.record(rollout, scrub))
            else:
                for triplet in triplets.records(rollout, scrub):
                    yield _dump(triplet)
