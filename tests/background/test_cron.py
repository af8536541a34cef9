"""Cron triggers on a controlled clock, in the user's time zone, with an in-process kernel:
the fire times APScheduler computes for a fixed "now", the job function run for such a
time, the schedule surviving a restart in the kernel's database, and misfire handling."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from bg_agents import SUMMARISER, SUMMARISER_YAML, write_agent
from sqlalchemy import select

from dreamer.kernel.config import load_settings
from dreamer.host.build import build_kernel
from dreamer.kernel.core import Kernel
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.store.models import Invocation, Trigger, User
from dreamer.kernel.triggers import cron
from dreamer.contracts.triggers import ScheduleError, cron_trigger

PARIS = ZoneInfo("Europe/Paris")
UTC = timezone.utc


class World:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.loop = asyncio.Runner()
        self.kernel: Kernel | None = None

    def start(self) -> Kernel:
        settings = load_settings(home=self.home, database_url=f"sqlite:///{self.home / 'kernel.db'}", sandbox="bwrap")
        self.kernel = build_kernel(settings)
        self.loop.run(self.kernel.start())
        return self.kernel

    def stop(self) -> None:
        if self.kernel is not None:
            self.loop.run(asyncio.wait_for(self.kernel.stop(), 30))
            self.kernel = None

    def run(self, coro: Any) -> Any:
        return self.loop.run(coro)

    def wait_for(self, check: Any, timeout: float = 60) -> Any:
        """Let the kernel's event loop work until check() answers something."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            self.run(asyncio.sleep(0.1))
        raise AssertionError("timed out")

    def morning(self) -> Trigger:
        assert self.kernel is not None
        with self.kernel.store.session() as s:
            row = s.scalar(select(Trigger).where(Trigger.agent == "summariser", Trigger.name == "morning"))
            s.expunge(row)
            return row

    def runs(self) -> list[Invocation]:
        assert self.kernel is not None
        with self.kernel.store.session() as s:
            rows = list(s.scalars(select(Invocation).where(Invocation.function == "morning").order_by(Invocation.created_at)))
            for r in rows:
                s.expunge(r)
            return rows


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("cron")
    w = World(root / "home")
    k = w.start()
    with k.store.session() as s:
        me = s.scalar(select(User).where(User.name == "me"))
        me.timezone = "Europe/Paris"
        who = Principal(me.id, me.name, "Europe/Paris")
    w.run(k.installer.install_folder(who, write_agent(root, "summariser", SUMMARISER, SUMMARISER_YAML, ["schedule", "notify"])))
    yield w
    w.stop()
    w.loop.close()


def test_fire_times_follow_the_users_zone_across_daylight_saving() -> None:
    weekdays_7am = cron_trigger("0 7 * * 1-5", PARIS)
    # Friday 27 March 2026, 12:00 UTC: the next weekday 07:00 in Paris is Monday, after the
    # clocks went forward on Sunday 29 March, so it is 05:00 UTC, not 06:00.
    friday_noon = datetime(2026, 3, 27, 12, 0, tzinfo=UTC)
    monday = weekdays_7am.get_next_fire_time(None, friday_noon)
    assert monday == datetime(2026, 3, 30, 7, 0, tzinfo=PARIS)
    assert monday.astimezone(UTC) == datetime(2026, 3, 30, 5, 0, tzinfo=UTC)
    # Friday 05:30 UTC is 06:30 in Paris (winter time): 07:00 the same day, 06:00 UTC.
    assert weekdays_7am.get_next_fire_time(None, datetime(2026, 3, 27, 5, 30, tzinfo=UTC)).astimezone(UTC) == datetime(
        2026, 3, 27, 6, 0, tzinfo=UTC
    )
    # Weekdays count as in crontab (0 and 7 are Sunday), not as APScheduler 3 numbers them.
    sunday = cron_trigger("0 9 * * 0", PARIS).get_next_fire_time(None, friday_noon)
    assert sunday.weekday() == 6 and sunday == datetime(2026, 3, 29, 9, 0, tzinfo=PARIS)
    for bad in ("* * *", "0 25 * * *", "0 7 * * */2", "0 7 * * 8"):
        with pytest.raises(ScheduleError):
            cron_trigger(bad, PARIS)


def test_the_job_is_stored_in_the_kernel_database_in_the_users_zone(world: World) -> None:
    assert world.kernel is not None
    row = world.morning()
    job = world.kernel.triggers.cron.scheduler.get_job(cron.job_id(row.id))
    assert str(job.trigger.timezone) == "Europe/Paris"
    assert job.next_run_time == job.trigger.get_next_fire_time(None, datetime.now(UTC) - timedelta(seconds=1)) or (
        job.next_run_time > datetime.now(UTC)
    )
    assert job.next_run_time.astimezone(PARIS).hour == 7 and job.next_run_time.astimezone(PARIS).weekday() < 5
    with world.kernel.store.engine.connect() as conn:
        stored = conn.exec_driver_sql("select id from apscheduler_jobs").scalars().all()
    assert cron.job_id(row.id) in stored


def test_the_job_function_runs_the_entrypoint_for_a_computed_fire_time(world: World) -> None:
    assert world.kernel is not None
    row = world.morning()
    fire_at = cron_trigger(row.default_schedule, PARIS).get_next_fire_time(None, datetime(2026, 3, 27, 12, 0, tzinfo=UTC))
    run_id = world.run(world.kernel.triggers.cron.fire(row.id, scheduled_for=fire_at))
    done = world.wait_for(lambda: next((r for r in world.runs() if r.id == run_id and r.status in ("succeeded", "failed")), None))
    assert done.status == "succeeded", done.error_message
    fired = done.result["fired"]
    assert fired["scheduled_for"] == "2026-03-30T07:00:00+02:00" and fired["timezone"] == "Europe/Paris"
    assert fired["trigger"] == "morning" and done.trigger["type"] == "cron" and done.background
    # The function APScheduler calls, with only the trigger's id, takes the same path.
    before = len(world.runs())
    world.run(cron.fire_job(row.id))
    world.wait_for(lambda: len(world.runs()) > before)


def test_schedules_survive_a_restart_and_misfires_run_once_within_the_grace_time(world: World) -> None:
    assert world.kernel is not None
    row = world.morning()
    next_run = world.kernel.triggers.cron.next_run(row.id)
    engine_url = f"sqlite:///{world.home / 'kernel.db'}"
    world.stop()
    # While the kernel is down, the job's run time passes: ten minutes ago (within the grace time).
    store = SQLAlchemyJobStore(url=engine_url)
    job = store.lookup_job(cron.job_id(row.id))
    assert job.next_run_time == next_run  # what the kernel left in its database
    job.next_run_time = datetime.now(UTC) - timedelta(minutes=10)
    store.update_job(job)
    store.shutdown()
    restarted = datetime.now(UTC)
    k = world.start()
    ran = world.wait_for(lambda: [r for r in world.runs() if r.created_at.replace(tzinfo=UTC) >= restarted and r.status == "succeeded"])
    world.run(asyncio.sleep(0.5))
    assert len([r for r in world.runs() if r.created_at.replace(tzinfo=UTC) >= restarted]) == len(ran) == 1  # coalesced
    moved = k.triggers.cron.next_run(row.id)
    assert moved > datetime.now(UTC) and moved.astimezone(PARIS).hour == 7
    # Overdue by more than the grace time: skipped, and the schedule goes on.
    count = len(world.runs())
    world.stop()
    store = SQLAlchemyJobStore(url=engine_url)
    job = store.lookup_job(cron.job_id(row.id))
    stale = datetime.now(UTC) - timedelta(seconds=cron.MISFIRE_GRACE_S + 600)
    job.next_run_time = stale
    store.update_job(job)
    store.shutdown()
    k = world.start()
    world.wait_for(lambda: k.triggers.cron.next_run(row.id) > datetime.now(UTC))
    # The stale time itself is skipped. A real fire time of the schedule between it and now that
    # is within the grace time (this test run just after 07:00 Paris on a weekday) is due, and
    # runs once: that is the schedule going on, not the misfire.
    due = _latest_fire(cron_trigger(row.schedule or row.default_schedule, PARIS), stale, datetime.now(UTC))
    expected = count + (1 if due is not None and (datetime.now(UTC) - due).total_seconds() <= cron.MISFIRE_GRACE_S else 0)
    if expected > count:
        world.wait_for(lambda: len(world.runs()) >= expected)
    world.run(asyncio.sleep(1.0))
    assert len(world.runs()) == expected


def _latest_fire(trigger: object, after: datetime, until: datetime) -> datetime | None:
    """The schedule's last fire time in (after, until], if any."""
    latest = None
    when = trigger.get_next_fire_time(None, after + timedelta(seconds=1))  # type: ignore[attr-defined]
    while when is not None and when <= until:
        latest = when
        when = trigger.get_next_fire_time(when, when + timedelta(seconds=1))  # type: ignore[attr-defined]
    return latest


def test_a_tick_fired_once_is_not_queued_again(world: World) -> None:
    """A new cluster leader replaying a tick the old one fired (kernel/cluster/) finds its
    cron_fires row and queues nothing; another tick of the same trigger still fires."""
    assert world.kernel is not None
    row = world.morning()
    tick = datetime(2026, 4, 1, 5, 0, tzinfo=UTC)
    first = world.run(world.kernel.triggers.cron.fire(row.id, scheduled_for=tick, once=True))
    again = world.run(world.kernel.triggers.cron.fire(row.id, scheduled_for=tick.astimezone(PARIS), once=True))
    later = world.run(world.kernel.triggers.cron.fire(row.id, scheduled_for=tick + timedelta(days=1), once=True))
    assert first is not None and again is None and later is not None and later != first
    world.wait_for(lambda: all(r.status in ("succeeded", "failed") for r in world.runs() if r.id in (first, later)))
