"""Go's time.Parse and Format for the two layouts metav1 uses, with Go's error texts.

Kubernetes piece: k8s.io/apimachinery/pkg/apis/meta/v1 time.go and micro_time.go. Their
UnmarshalJSON decode a JSON string with `time.Parse(time.RFC3339, s)` (Time) or
`time.Parse(RFC3339Micro, s)` (MicroTime, layout `2006-01-02T15:04:05.000000Z07:00`); their
MarshalJSON write the instant back in UTC, Time with second precision and MicroTime with six
fractional digits, and the zero instant (0001-01-01T00:00:00Z) as JSON `null`.

Why a port and not datetime.fromisoformat: what Go accepts and refuses is the contract clients
meet (a one-digit hour and a `,5` fraction are accepted, a `+24:00` offset is, a leap second, a
lowercase `t` or `z` and a MicroTime without exactly six digits are not), and a refused value is
a 400 whose message is Go's `*time.ParseError` text, byte for byte. This is Go's general
`time.parse` walk (format.go) restricted to the layout elements the two layouts use; Go's
RFC 3339 fast path accepts a subset of what the walk accepts, so the walk alone decides.
Instants are plain integers (seconds since the epoch, nanoseconds), so years 0 and 10000 that
an offset can reach format as Go formats them, where datetime would overflow.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"

#: the layouts as Go's nextStdChunk splits them: (literal prefix, layout element)
_CHUNKS = {
    RFC3339: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"),
              ("", "Z07:00")),
    RFC3339_MICRO: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"),
                    (":", "05"), ("", ".000000"), ("", "Z07:00")),
}
#: seconds from 0001-01-01T00:00:00Z (Go's zero Time) to the Unix epoch
ZERO_TIME_UNIX = -62135596800
_DAYS_BEFORE_MONTH = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


class TimeParseError(ValueError):
    """A value Go's time.Parse refuses; str() is Go's ParseError.Error() text."""


class Instant(NamedTuple):
    """A parsed time: seconds since the Unix epoch (UTC) and nanoseconds in [0, 1e9)."""

    seconds: int
    nanos: int


def go_quote(text: str) -> str:
    """The time package's own quote(): `\\"` and `\\\\` escaped, every byte of a non-ASCII or
    control character as `\\xNN` (not strconv.Quote)."""
    out = ['"']
    for char in text:
        if char < " " or char > "\x7f":
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
        elif char in '"\\':
            out.append("\\" + char)
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _error(layout: str, value: str, elem: str, value_elem: str,
           message: str = "") -> TimeParseError:
    if message:
        return TimeParseError(f"parsing time {go_quote(value)}{message}")
    return TimeParseError(f"parsing time {go_quote(value)} as {go_quote(layout)}: cannot parse "
                          f"{go_quote(value_elem)} as {go_quote(elem)}")


class _Bad(Exception):
    """Go's errBad inside the walk: reported against the element being parsed."""


def _digit(text: str, i: int) -> bool:
    return i < len(text) and "0" <= text[i] <= "9"


def _getnum(text: str, fixed: bool) -> tuple[int, str]:
    """Go's getnum: one or two digits (exactly two when fixed)."""
    if not _digit(text, 0):
        raise _Bad
    if not _digit(text, 1):
        if fixed:
            raise _Bad
        return int(text[0]), text[1:]
    return int(text[:2]), text[2:]


def _atoi(text: str) -> int:
    """Go's time.atoi: an optional sign, then digits only."""
    sign = 1
    if text[:1] in ("-", "+"):
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if not text:  # Go's leadingInt of nothing is 0, no error
        return 0
    if not text.isascii() or not text.isdigit():
        raise _Bad
    return sign * int(text)


def _nanoseconds(text: str, nbytes: int) -> tuple[int, str]:
    """Go's parseNanoseconds over text[:nbytes] (a separator, then the digits): the value and
    a range error ("" when none); digits past the ninth are dropped (truncation)."""
    if text[0] not in ".,":
        raise _Bad
    nbytes = min(nbytes, 10)
    ns = _atoi(text[1:nbytes])
    if ns < 0:
        return 0, "fractional second"
    return ns * 10 ** (10 - nbytes), ""


def is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if is_leap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year)."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    days += 719468
    era = days // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (month <= 2), month, day


def parse(layout: str, value: str) -> Instant:
    """Go's time.Parse(layout, value) for RFC3339 and RFC3339_MICRO; raises TimeParseError
    with Go's message."""
    chunks = _CHUNKS[layout]
    rest = value
    year = month = day = hour = minute = second = nanos = 0
    offset = 0
    for index, (prefix, elem) in enumerate(chunks):
        for char in prefix:  # Go's skip(): literal text of the layout
            if not rest or rest[0] != char:
                raise _error(layout, value, prefix, rest)
            rest = rest[1:]
        hold = rest
        range_error = ""
        try:
            if elem == "2006":
                if len(rest) < 4 or not _digit(rest, 0):
                    raise _Bad
                year, rest = _atoi(rest[:4]), rest[4:]
            elif elem == "01":
                month, rest = _getnum(rest, True)
                if not 0 < month <= 12:
                    range_error = "month"
            elif elem == "02":  # any day for now: validated against the month at the end
                day, rest = _getnum(rest, True)
            elif elem == "15":
                hour, rest = _getnum(rest, False)
                if hour >= 24:
                    range_error = "hour"
            elif elem == "04":
                minute, rest = _getnum(rest, True)
                if minute >= 60:
                    range_error = "minute"
            elif elem == "05":
                second, rest = _getnum(rest, True)
                if second >= 60:
                    range_error = "second"
                elif (len(rest) >= 2 and rest[0] in ".," and _digit(rest, 1)
                      and chunks[index + 1][1] != ".000000"):
                    # a fraction the layout does not have: Go reads it anyway
                    n = 2
                    while _digit(rest, n):
                        n += 1
                    nanos, range_error = _nanoseconds(rest, n)
                    rest = rest[n:]
            elif elem == ".000000":  # exactly six digits after the separator
                if len(rest) < 7:
                    raise _Bad
                nanos, range_error = _nanoseconds(rest, 7)
                rest = rest[7:]
            else:  # "Z07:00"
                if rest[:1] == "Z":
                    rest = rest[1:]
                    continue
                if len(rest) < 6 or rest[3] != ":":
                    raise _Bad
                sign, hours_text, minutes_text, rest = rest[0], rest[1:3], rest[4:6], rest[6:]
                hours = minutes = 0
                bad = False
                try:  # Go checks the ranges (> 24, > 60: offsets of 24 h are written) first
                    hours, _ = _getnum(hours_text, True)
                    minutes, _ = _getnum(minutes_text, True)
                except _Bad:
                    bad = True
                if hours > 24:
                    range_error = "time zone offset hour"
                if minutes > 60:
                    range_error = "time zone offset minute"
                if bad or sign not in "+-":
                    raise _Bad
                offset = (hours * 60 + minutes) * 60 * (-1 if sign == "-" else 1)
        except _Bad:
            if range_error:
                raise _error(layout, value, elem, rest, f": {range_error} out of range") from None
            raise _error(layout, value, elem, hold) from None
        if range_error:
            raise _error(layout, value, elem, rest, f": {range_error} out of range")
    if rest:
        raise _error(layout, value, "", rest, f": extra text: {go_quote(rest)}")
    if day < 1 or day > days_in(month, year):
        raise _error(layout, value, "", rest, ": day out of range")
    seconds = (_days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60
               + second - offset)
    return Instant(seconds, nanos)


def format_utc(instant: Instant, micro: bool) -> str:
    """Go's t.UTC().Format(RFC3339) (micro: RFC3339Micro; the fraction truncated, never
    rounded). Years past 9999 or before 0 print as Go prints them (`10000`, `-0001`)."""
    days, second_of_day = divmod(instant.seconds, 86400)
    year, month, day = _civil_from_days(days)
    hour, rem = divmod(second_of_day, 3600)
    minute, second = divmod(rem, 60)
    year_text = f"-{-year:04d}" if year < 0 else f"{year:04d}"
    text = f"{year_text}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
    return f"{text}.{instant.nanos // 1000:06d}Z" if micro else text + "Z"


def is_zero(instant: Instant) -> bool:
    """Go's Time.IsZero: the instant 0001-01-01T00:00:00Z, which metav1 writes as null."""
    return instant.seconds == ZERO_TIME_UNIX and instant.nanos == 0


#: text already in the form format_utc writes: 4-digit year, UTC `Z`, and (MicroTime) exactly
#: six fractional digits — what every client and component sends for a fresh timestamp
_CANONICAL = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d{6})?Z\Z", re.ASCII)


def _already_canonical(text: str, micro: bool) -> bool:
    """Does Go parse `text` to an instant that formats back to `text` itself? True for the
    canonical form with in-range fields (Go refuses day 31 of a 30-day month and second 60, as
    the range checks do here); anything else, and the zero instant, takes the full walk."""
    match = _CANONICAL.match(text)
    if match is None or (match.group(7) is not None) != micro:
        return False
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    return (year > 1 and 1 <= month <= 12 and 1 <= day <= days_in(month, year)
            and hour < 24 and minute < 60 and second < 60)


@lru_cache(maxsize=8192)
def reencode(text: str, micro: bool) -> str | None:
    """A metav1.Time (micro: MicroTime) JSON string as upstream decodes and re-encodes it: the
    canonical UTC text, or None where upstream writes null. Raises TimeParseError.
    Remembered: the same timestamps recur across writes (status updates, events); a fresh one
    (a lease renewal's renewTime) is usually canonical already and skips Go's parse walk."""
    if _already_canonical(text, micro):
        return text
    instant = parse(RFC3339_MICRO if micro else RFC3339, text)
    return None if is_zero(instant) else format_utc(instant, micro)
