"""CronJob schedules: parse, check and step through standard cron syntax.

Kubernetes piece: the robfig/cron v3 `ParseStandard` parser the CronJob controller and
validation use (pkg/controller/cronjob/utils.go mostRecentScheduleTime/nextScheduleTime,
validation's validateScheduleFormat): five fields (minute hour day-of-month month
day-of-week) or a descriptor (`@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/
`@midnight`, `@hourly`). The stepping is croniter's (a maintained PyPI library); `@every
<duration>` of robfig is not supported (reported as invalid). Times are evaluated in the
CronJob's `timeZone` (IANA, zoneinfo) or UTC — the controller manager's local zone upstream,
which is UTC in every cluster we run. Pure.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from types import ModuleType
from zoneinfo import ZoneInfo

DESCRIPTORS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


def _expression(schedule: str) -> str:
    text = schedule.strip()
    if text.startswith("@"):
        if text in DESCRIPTORS:
            return DESCRIPTORS[text]
        raise ValueError(f"unrecognized descriptor: {text}")
    fields = text.split()
    if len(fields) != 5:
        raise ValueError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    return " ".join(fields)


@cache
def _croniter() -> ModuleType:
    """croniter (and dateutil under it), imported on the first schedule a cluster sees: most
    never see one, and it is ~50 ms of every API server's start otherwise."""
    import croniter

    return croniter


def schedule_error(schedule: str) -> str | None:
    """The reason `schedule` does not parse, or None when it does."""
    try:
        expr = _expression(schedule)
    except ValueError as exc:
        return str(exc)
    if not _croniter().croniter.is_valid(expr):
        return f"unparseable schedule: {schedule}"
    return None


def _zone(time_zone: str | None):
    return ZoneInfo(time_zone) if time_zone else UTC


def next_after(schedule: str, time_zone: str | None, after: float) -> float | None:
    """The first scheduled time strictly after `after` (epoch seconds); None for a schedule
    that never fires (`0 0 30 2 *`: robfig's zero time)."""
    start = datetime.fromtimestamp(after, _zone(time_zone))
    cron = _croniter()
    try:
        return cron.croniter(_expression(schedule), start).get_next(float)
    except cron.CroniterBadDateError:
        return None


def most_recent(schedule: str, time_zone: str | None, earliest: float,
                now: float) -> tuple[float | None, int]:
    """Upstream mostRecentScheduleTime: the latest scheduled time in (earliest, now] and how
    many were missed in that window (capped at 101: the controller only needs "more than
    100" to warn). None when no time falls in it."""
    cron = _croniter()
    it = cron.croniter(_expression(schedule),
                       datetime.fromtimestamp(earliest, _zone(time_zone)))
    last: float | None = None
    missed = 0
    while True:
        try:
            t = it.get_next(float)
        except cron.CroniterBadDateError:
            return last, missed
        if t > now:
            return last, missed
        last = t
        missed += 1
        if missed > 100:
            # too many to step through: jump to the latest time at or before now
            after_now = datetime.fromtimestamp(now + 0.001, _zone(time_zone))
            return cron.croniter(_expression(schedule), after_now).get_prev(float), missed
