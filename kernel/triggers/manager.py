"""Triggers per user: kept in step with what is installed, changed by the user, fired.

Each installed agent's `triggers:` become rows of the `triggers` table when it is
installed; an upgrade keeps what the user changed (their own schedule, paused,
the webhook's token and secret) for triggers that keep their name. Firing a trigger
checks the agent's `schedule` grant (audited either way) and queues a background
invocation of its entrypoint, with what fired it as the one argument.
"""

from __future__ import annotations

import builtins
import logging
import secrets
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from dreamer.kernel.audit.log import append as audit
from dreamer.contracts.errors import DreamerError
from dreamer.kernel.install.registry import find_installed
from dreamer.kernel.invocations.principal import Caller, Principal
from dreamer.kernel.invocations.records import Outcome
from dreamer.kernel.store.models import Trigger, User
from dreamer.kernel.triggers.chains import MAX_CHAIN_RUNS, spend
from dreamer.contracts.triggers import ScheduleError, check_schedule

if TYPE_CHECKING:
    from dreamer.kernel.core import Kernel

log = logging.getLogger("dreamer.triggers")

MAX_EVENT_DEPTH = 8  # events setting off events: a chain longer than this is a loop


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 256 bits: the URL is the credential


def trigger_view(t: Trigger, next_run: datetime | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "agent": t.agent, "name": t.name, "type": t.type, "entrypoint": t.entrypoint, "paused": t.paused,
    }
    if t.type == "cron":
        view |= {"schedule": t.schedule or t.default_schedule, "default_schedule": t.default_schedule,
                 "next_run": next_run.isoformat() if next_run else None}
    elif t.type == "webhook":
        view |= {"path": f"/hooks/{t.token}", "signed": bool(t.secret)}
    elif t.type == "event":
        view["event"] = t.event
    elif t.type == "input":
        view["content_types"] = t.content_types
    return view


class TriggerService:
    def __init__(self, kernel: "Kernel") -> None:
        self.kernel = kernel
        self.store = kernel.store
        self.cron: Any = None  # CronScheduler, set by the kernel at start

    # -- rows -----------------------------------------------------------------------------

    async def sync_agent(self, who: Principal, agent: str) -> None:
        """Make the user's trigger rows match the installed agent's manifest (none after an uninstall)."""
        with self.store.session() as s:
            installed = find_installed(s, who.user_id, agent)
            declared = {t.name: t for t in installed.manifest.triggers} if installed else {}
            rows = {t.name: t for t in s.scalars(select(Trigger).where(Trigger.user_id == who.user_id, Trigger.agent == agent))}
            for name, row in rows.items():
                spec = declared.get(name)
                if spec is None or spec.type != row.type:
                    s.delete(row)
            s.flush()
            for name, spec in declared.items():
                kept = rows.get(name)
                if kept is None or kept.type != spec.type:
                    kept = Trigger(user_id=who.user_id, agent=agent, name=name, type=spec.type, paused=False)
                    s.add(kept)
                kept.entrypoint = spec.entrypoint
                kept.default_schedule = spec.schedule
                kept.event = spec.event
                kept.content_types = spec.content_types
                if kept.type == "webhook" and not kept.token:
                    kept.token = new_token()
        if self.cron is not None:
            self.cron.sync_user(who.user_id)

    def list(self, user_id: int, agent: str | None = None) -> list[dict[str, Any]]:
        with self.store.session() as s:
            q = select(Trigger).where(Trigger.user_id == user_id)
            if agent:
                q = q.where(Trigger.agent == agent)
            rows = list(s.scalars(q.order_by(Trigger.agent, Trigger.name)))
            return [trigger_view(t, self.cron.next_run(t.id) if self.cron and t.type == "cron" else None) for t in rows]

    def get(self, s: Session, user_id: int, agent: str, name: str) -> Trigger:
        row = s.scalar(select(Trigger).where(Trigger.user_id == user_id, Trigger.agent == agent, Trigger.name == name))
        if row is None:
            raise DreamerError("not_found", f"{agent} has no trigger named {name!r}; `dreamer triggers {agent}` lists them")
        return row

    def update(self, who: Principal, agent: str, name: str, changes: dict[str, Any]) -> dict[str, Any]:
        """Pause or resume, set the user's own cron schedule ("" or None: back to the default),
        set or clear a webhook's signing secret. Audited."""
        with self.store.session() as s:
            row = self.get(s, who.user_id, agent, name)
            if "schedule" in changes:
                if row.type != "cron":
                    raise DreamerError("invalid_argument", f"{agent}'s trigger {name!r} is a {row.type} trigger; only cron triggers have a schedule")
                schedule = changes["schedule"]
                try:
                    row.schedule = check_schedule(schedule) if schedule else None
                except ScheduleError as exc:
                    raise DreamerError("invalid_argument", str(exc)) from None
            if "secret" in changes:
                if row.type != "webhook":
                    raise DreamerError("invalid_argument", f"{agent}'s trigger {name!r} is a {row.type} trigger; only webhooks have a secret")
                row.secret = changes["secret"] or None
            if "paused" in changes:
                row.paused = bool(changes["paused"])
            detail = {k: (v if k != "secret" else bool(v)) for k, v in changes.items()}
            audit(s, user_id=who.user_id, actor=who.actor, action="triggers.update", target=f"{agent}.{name}"[:200],
                  decision="allow", detail=detail)
            trigger_id = row.id
        if self.cron is not None:
            self.cron.sync_user(who.user_id)
        with self.store.session() as s:
            row = s.get_one(Trigger, trigger_id)
            return trigger_view(row, self.cron.next_run(row.id) if self.cron and row.type == "cron" else None)

    # -- firing ------------------------------------------------------------------------------

    async def fire(
        self, row: Trigger, payload: dict[str, Any], *, depth: int = 0, parent_id: str | None = None, manual: bool = False,
        chain: str | None = None,
    ) -> Outcome:
        """Queue a background invocation of the trigger's entrypoint with `payload` as its argument.

        Refused (and audited) without the agent's `schedule` grant; a paused trigger
        fires only when the user asks (`manual`, `dreamer trigger run`)."""
        with self.store.session() as s:
            user = s.get(User, row.user_id)
            assert user is not None
            who = Principal(user.id, user.name, user.timezone or "UTC")
            target = f"{row.agent}.{row.name}"[:200]
            decision = self.kernel.invoker.cache.decide(user.id, row.agent, "schedule")
            decision.audit(
                s, user_id=user.id, actor=f"trigger:{row.type}", action="triggers.fire", target=target,
                detail={"type": row.type, "manual": manual}, invocation_id=parent_id,
            )
        if chain is not None:
            with self.store.session() as s:
                spent = spend(s, chain, row.user_id)
            if spent > MAX_CHAIN_RUNS:
                with self.store.session() as s:
                    if spent == MAX_CHAIN_RUNS + 1:  # one entry when the budget runs out, not one per refusal
                        audit(s, user_id=row.user_id, actor=f"trigger:{row.type}", action="triggers.chain_budget",
                              target=f"{row.agent}.{row.name}"[:200], decision="deny",
                              detail={"chain": chain, "runs": MAX_CHAIN_RUNS}, invocation_id=parent_id)
                raise DreamerError(
                    "rate_limited",
                    f"{row.agent}'s trigger {row.name!r} refused: the chain of events started by {chain} "
                    f"already set off {MAX_CHAIN_RUNS} runs",
                )
        decision.require("run on its triggers")
        if row.paused and not manual:
            raise DreamerError("conflict", f"{row.agent}'s trigger {row.name!r} is paused; `dreamer trigger resume {row.agent} {row.name!r}` resumes it")
        installed = self.kernel.invoker.cache.agent(user.id, row.agent)
        if installed is None:
            raise DreamerError("not_found", f"{row.agent} is not installed")
        spec = installed.function(row.entrypoint)
        names = list(spec.parameters.get("properties") or {})
        args = {names[0]: payload} if names else {}
        trigger = {"type": row.type, "name": row.name, "depth": depth, "id": row.id, **({"chain": chain} if chain else {})}
        caller = Caller("trigger", trigger=trigger, parent_id=parent_id)
        return await self.kernel.invoker.invoke(who, row.agent, row.entrypoint, args, caller)

    async def fire_by_name(self, who: Principal, agent: str, name: str) -> Outcome:
        """`dreamer trigger run AGENT NAME`: fire now, paused or not, with a payload that says so."""
        with self.store.session() as s:
            row = self.get(s, who.user_id, agent, name)
            s.expunge(row)
        payload: dict[str, Any] = {"trigger": name, "type": row.type, "manual": True,
                                   "fired_at": datetime.now(timezone.utc).isoformat()}
        return await self.fire(row, payload, manual=True)

    def subscribers(self, user_id: int, event: str) -> builtins.list[Trigger]:
        with self.store.session() as s:
            rows = list(s.scalars(select(Trigger).where(
                Trigger.user_id == user_id, Trigger.type == "event", Trigger.event == event, Trigger.paused.is_(False)
            ).order_by(Trigger.agent)))
            for row in rows:
                s.expunge(row)
            return rows
