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

Several kernels on one database (kernel/cluster/): every node keeps its scheduler paused,
writing job changes to the shared job store, and only the leader's runs (`lead`). Each
tick is claimed by a `cron_fires` row (trigger, scheduled minute) before it is queued, so a
new leader replaying a tick the old one fired just before it died does not queue it twice.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.executors.asyncio import AsyncIOExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.store.models import CronFire, Trigger, User
from dreamer.contracts.triggers import ScheduleError, cron_trigger

if TYPE_CHECKING:
    from dreamer.kernel.triggers.manager import TriggerService

log = logging.getLogger("dreamer.triggers.cron")

MISFIRE_GRACE_S = 3600
JOB_FUNCTION = "dreamer.kernel.triggers.cron:fire_job"

# The scheduler of the running kernel: jobs are stored as a reference to `fire_job`
# plus the trigger's id, never as a pickled kernel object.
ACTIVE: "CronScheduler | None" = None


async def fire_job(trigger_id: int) -> None:
    """What APScheduler runs when a cron trigger is due."""
    if ACTIVE is not None:
        tick = TICK.get()
        await ACTIVE.fire(trigger_id, tick, once=tick is not None)


# The run time APScheduler is firing a job for (coalesced: the latest one due). APScheduler
# does not hand it to the job function; the executor sets it in the context the job's task
# is created with, so each firing sees its own.
TICK: contextvars.ContextVar[datetime | None] = contextvars.ContextVar("dreamer_cron_tick", default=None)


class TickExecutor(AsyncIOExecutor):  # type: ignore[misc]  # apscheduler has no stubs: its classes are Any
    def _do_submit_job(self, job: Any, run_times: list[datetime]) -> None:
        token = TICK.set(run_times[-1] if run_times else None)
        try:
            super()._do_submit_job(job, run_times)
        finally:
            TICK.reset(token)


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
            executors={"default": TickExecutor()},
            job_defaults={"coalesce": True, "misfire_grace_time": MISFIRE_GRACE_S, "max_instances": 1},
            timezone=timezone.utc,
        )
        self.on_change: Callable[[], None] = lambda: None  # a cluster node tells the leader to look again

    def start(self, *, leading: bool = True) -> None:
        """`leading` False on a cluster node: it stays paused until it is elected (`lead`)."""
        global ACTIVE
        ACTIVE = self
        self.scheduler.start(paused=True)
        self.sync_all()
        if leading:
            self.scheduler.resume()

    def lead(self, leading: bool) -> None:
        """A cluster node became (or stopped being) the leader: fire jobs, or only store them."""
        if not self.scheduler.running:
            return  # stopped (paused counts as running)
        if leading:
            self.scheduler.resume()
        else:
            self.scheduler.pause()

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
        self.on_change()

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

    async def fire(self, trigger_id: int, scheduled_for: datetime | None = None, *, once: bool = False) -> str | None:
        """Queue the entrypoint of a due cron trigger; the invocation id, or None when it was
        refused (no schedule grant, paused, gone), which is logged and audited, not raised.
        With `once`, a tick already fired (by this node or another) is not fired again."""
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
        if once and not self._claim_tick(trigger_id, when):
            log.info("cron trigger %s.%s already fired for %s", row.agent, row.name, when.isoformat())
            return None
        try:
            outcome = await self.triggers.fire(row, payload)
        except DreamerError as exc:
            log.warning("cron trigger %s.%s did not run: %s", row.agent, row.name, exc.message)
            return None
        if once:
            with self.store.session() as s:
                s.execute(update(CronFire).where(CronFire.trigger_id == trigger_id,
                                                 CronFire.scheduled_for == when.astimezone(timezone.utc))
                          .values(invocation_id=outcome.invocation_id))
        return outcome.invocation_id

    def _claim_tick(self, trigger_id: int, when: datetime) -> bool:
        """One row per (trigger, tick): False when it exists already. Rows older than a day go."""
        when = when.astimezone(timezone.utc)
        try:
            with self.store.session() as s:
                s.execute(delete(CronFire).where(
                    CronFire.trigger_id == trigger_id, CronFire.scheduled_for < when - timedelta(days=1)))
                s.add(CronFire(trigger_id=trigger_id, scheduled_for=when, node=self.triggers.kernel.settings.node))
        except IntegrityError:
            return False
        return True


def same_schedule(have: Any, want: CronTrigger) -> bool:
    return isinstance(have, CronTrigger) and str(have) == str(want) and str(have.timezone) == str(want.timezone)
