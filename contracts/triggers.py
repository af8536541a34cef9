"""The forms trigger fields take in agent.yaml: cron schedules, event names, content types.

Cron schedules are standard five-field crontab lines read in the user's time zone.
APScheduler 3 numbers weekdays from Monday = 0, crontab from Sunday = 0, so the
weekday field is rewritten with day names before APScheduler sees it; a step in
that field (`*/2`) would count differently in the two and is refused.
"""

from __future__ import annotations

import re
from datetime import tzinfo

from apscheduler.triggers.cron import CronTrigger

from dreamer.contracts.names import NAME

EVENT_NAME_RE = r"[a-z][a-z0-9_-]{0,62}(\.[a-z][a-z0-9_-]{0,62}){0,4}"
AGENT_PART_RE = NAME
CONTENT_TYPE_RE = r"(\*|[a-z0-9][a-z0-9.+-]{0,126})/(\*|[a-z0-9][a-z0-9.+-]{0,126})"
DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")
MAX_SCHEDULE_CHARS = 200


class ScheduleError(ValueError):
    """A cron schedule that cannot be used, with a sentence that says why."""


def _weekdays(field: str) -> str:
    if "/" in field and field != "*":
        raise ScheduleError(
            f"the day-of-week field {field!r} uses a step, which cron and the scheduler count differently; list the days instead"
        )

    def name(token: str) -> str:
        if token.isdigit():
            number = int(token)
            if number > 7:
                raise ScheduleError(f"day of week {token} is not 0-7 (0 and 7 are Sunday)")
            return DAY_NAMES[number]
        return token

    parts = []
    for item in field.split(","):
        parts.append("-".join(name(t) for t in item.split("-")))
    return ",".join(parts)


def cron_trigger(schedule: str, timezone: tzinfo | str = "UTC") -> CronTrigger:
    """A crontab line ("0 7 * * 1-5") as an APScheduler trigger in `timezone`; ScheduleError if bad."""
    if not isinstance(schedule, str) or len(schedule) > MAX_SCHEDULE_CHARS:
        raise ScheduleError(f"a cron schedule is a text of at most {MAX_SCHEDULE_CHARS} characters")
    fields = schedule.split()
    if len(fields) != 5:
        raise ScheduleError(
            f"cron schedule {schedule!r} has {len(fields)} fields; it needs 5: minute hour day-of-month month day-of-week"
        )
    minute, hour, day, month, weekday = fields
    try:
        return CronTrigger(
            minute=minute, hour=hour, day=day, month=month, day_of_week=_weekdays(weekday), timezone=timezone
        )
    except ScheduleError:
        raise
    except (ValueError, TypeError) as exc:
        raise ScheduleError(f"cron schedule {schedule!r} is not valid: {exc}") from None


def check_schedule(schedule: str) -> str:
    cron_trigger(schedule)
    return " ".join(schedule.split())


def check_event(name: object, *, qualified: bool) -> str:
    """An event name ("article.saved"), or with `qualified` one naming its agent ("notes.article.saved")."""
    pattern = rf"{AGENT_PART_RE}\.{EVENT_NAME_RE}" if qualified else EVENT_NAME_RE
    if not isinstance(name, str) or not re.fullmatch(pattern, name):
        form = "AGENT.EVENT, e.g. notes.article.saved" if qualified else "lower-case words joined by dots, e.g. article.saved"
        raise ValueError(f"event {str(name)[:80]!r} does not have the form {form}")
    return name


def check_content_type(value: str) -> str:
    value = value.strip().lower() if isinstance(value, str) else value
    if not isinstance(value, str) or not re.fullmatch(CONTENT_TYPE_RE, value):
        raise ValueError(f"content type {str(value)[:80]!r} does not have the form type/subtype (text/plain, image/*, */*)")
    return value


def content_type_matches(pattern: str, content_type: str) -> bool:
    kind, _, sub = pattern.partition("/")
    have_kind, _, have_sub = content_type.partition("/")
    return kind in ("*", have_kind) and sub in ("*", have_sub)
