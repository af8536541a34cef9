"""Cron triggers on APScheduler 3, with its SQLAlchemyJobStore in the kernel's own database.

One job per cron trigger row (id `trigger-<row id>`), its CronTrigger in the user's
time zone (users.timezone). Jobs live in the `apscheduler_jobs` table, so the next
run time of every schedule survives a restart.

Misfires: a kernel that was down when a job was due runs it once when it starts
again (coalesce: a day of missed hourly runs is one run), if it is at most
MISFIRE_GRACE_S late; later than that the run is skipped and the schedule goes on
from the next time. The scheduler starts paused, brings jobs in step with the
trigger rows (an unchanged job is left alone, keeping its overdue run time), and
only then resumes, which is when overdue jobs are judged.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from sqlalchemy import select

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.models import Trigger, User
from dreamer.contracts.triggers import ScheduleError, cron_trigger

if TYPE_CHECKING:
    from dreamer.kernel.triggers.service import TriggerService

log = logging.getLogger("dreamer.triggers.cron")

MISFIRE_GRACE_S = 3600
JOB_FUNCTION = "dreamer.kernel.triggers.cron:fire_job"

# The scheduler of the running kernel: jobs are stored as a reference to `fire_job`
# plus the trigger's id, never as a pickled kernel object.
ACTIVE: "CronScheduler | None" = None


async def fire_job(trigger_id: int) -> None:
    """What APScheduler runs when a cron trigger is due."""
    if ACTIVE is not None:
        await ACTIVE.fire(trigger_id)


def user_zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        log.warning("unknown time zone %r; using UTC", name)
        return ZoneInfo("UTC")


def job_id(trigger_id: int) -> str:
    return f"trigger-{trigger_id}"


class CronScheduler:
    def __init__(self, triggers: "TriggerService") -> None:
        self.triggers = triggers
        self.store = triggers.store
        self.scheduler = AsyncIOScheduler(
            jobstores={"default": SQLAlchemyJobStore(engine=self.store.engine, tablename="apscheduler_jobs")},
            job_defaults={"coalesce": True, "misfire_grace_time": MISFIRE_GRACE_S, "max_instances": 1},
            timezone=timezone.utc,
        )

    def start(self) -> None:
        global ACTIVE
        ACTIVE = self
        self.scheduler.start(paused=True)
        self.sync_all()
        self.scheduler.resume()

    def stop(self) -> None:
        global ACTIVE
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        if ACTIVE is self:
            ACTIVE = None

    # -- keeping jobs in step with trigger rows ----------------------------------------------------

    def _rows(self, user_id: int | None = None) -> list[tuple[Trigger, str]]:
        with self.store.session() as s:
            q = select(Trigger, User.timezone).join(User, User.id == Trigger.user_id).where(Trigger.type == "cron")
            if user_id is not None:
                q = q.where(Trigger.user_id == user_id)
            rows = [(t, tz) for t, tz in s.execute(q)]
            for t, _ in rows:
                s.expunge(t)
            return rows

    def sync_all(self) -> None:
        rows = self._rows()
        wanted = {job_id(t.id) for t, _ in rows}
        for job in self.scheduler.get_jobs():
            if job.id.startswith("trigger-") and job.id not in wanted:
                self.scheduler.remove_job(job.id)
        for row, tz in rows:
            self._sync(row, tz)

    def sync_user(self, user_id: int) -> None:
        """After a user's triggers changed: add, change, pause, resume, remove their jobs."""
        rows = self._rows(user_id)
        with self.store.session() as s:
            every = set(s.scalars(select(Trigger.id).where(Trigger.type == "cron")))
        for job in self.scheduler.get_jobs():
            if job.id.startswith("trigger-") and int(job.id.split("-", 1)[1]) not in every:
                self.scheduler.remove_job(job.id)
        for row, tz in rows:
            self._sync(row, tz)

    def _sync(self, row: Trigger, tz: str | None) -> None:
        schedule = row.schedule or row.default_schedule
        if not schedule:
            return
        try:
            desired = cron_trigger(schedule, user_zone(tz))
        except ScheduleError as exc:
            log.warning("trigger %s.%s has an unusable schedule: %s", row.agent, row.name, exc)
            return
        job = self.scheduler.get_job(job_id(row.id))
        if job is None or not same_schedule(job.trigger, desired):
            job = self.scheduler.add_job(
                JOB_FUNCTION, trigger=desired, id=job_id(row.id), kwargs={"trigger_id": row.id},
                name=f"{row.agent}.{row.name}"[:200], replace_existing=True,
            )
        if row.paused and job.next_run_time is not None:
            self.scheduler.pause_job(job.id)
        elif not row.paused and job.next_run_time is None:
            self.scheduler.resume_job(job.id)

    def next_run(self, trigger_id: int) -> datetime | None:
        job = self.scheduler.get_job(job_id(trigger_id))
        return job.next_run_time if job is not None else None

    # -- firing -------------------------------------------------------------------------------------

    async def fire(self, trigger_id: int, scheduled_for: datetime | None = None) -> str | None:
        """Queue the entrypoint of a due cron trigger; the invocation id, or None when it was
        refused (no schedule grant, paused, gone), which is logged and audited, not raised."""
        with self.store.session() as s:
            found = s.execute(
                select(Trigger, User.timezone).join(User, User.id == Trigger.user_id).where(Trigger.id == trigger_id)
            ).first()
            if found is None:
                return None
            row, tz = found
            s.expunge(row)
        zone = user_zone(tz)
        now = datetime.now(timezone.utc)
        # APScheduler does not tell a job its scheduled time; cron is per minute, so the minute it runs
        # in is that time unless it ran late (a misfire within the grace time).
        when = (scheduled_for or now.replace(second=0, microsecond=0)).astimezone(zone)
        payload: dict[str, Any] = {
            "trigger": row.name, "type": "cron", "schedule": row.schedule or row.default_schedule,
            "scheduled_for": when.isoformat(), "fired_at": now.astimezone(zone).isoformat(), "timezone": zone.key,
        }
        try:
            outcome = await self.triggers.fire(row, payload)
        except DreamerError as exc:
            log.warning("cron trigger %s.%s did not run: %s", row.agent, row.name, exc.message)
            return None
        return outcome.invocation_id


def same_schedule(have: Any, want: CronTrigger) -> bool:
    return isinstance(have, CronTrigger) and str(have) == str(want) and str(have.timezone) == str(want.timezone)
