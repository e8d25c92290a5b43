"""Go's time.Parse / Format for metav1.Time and MicroTime (api/gotime.py), table-driven.

Expected texts follow Go's time/format.go (parse, parseNanoseconds, ParseError.Error, quote) and
metav1's MarshalJSON (UTC, Time to the second, MicroTime with six digits, zero as null)."""

from __future__ import annotations

import pytest

from minikube_py.api import gotime

LAYOUT = '"2006-01-02T15:04:05Z07:00"'
MICRO = '"2006-01-02T15:04:05.000000Z07:00"'

TIME_OK = [
    ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z"),
    ("2024-05-01T10:00:00+00:00", "2024-05-01T10:00:00Z"),  # the Python client's isoformat()
    ("2024-05-01T12:00:00+02:00", "2024-05-01T10:00:00Z"),
    ("2024-05-01T00:30:00+01:00", "2024-04-30T23:30:00Z"),  # across a day
    ("2024-05-01T23:30:00-01:00", "2024-05-02T00:30:00Z"),
    ("2024-05-01T10:00:00.999999999999Z", "2024-05-01T10:00:00Z"),  # truncated, not rounded
    ("2024-05-01T10:00:00,5Z", "2024-05-01T10:00:00Z"),  # Go accepts a comma too
    ("2024-05-01T1:02:03Z", "2024-05-01T01:02:03Z"),  # the hour may have one digit
    ("2024-05-01T10:00:00+24:00", "2024-04-30T10:00:00Z"),  # Go allows offsets up to 24 h
    ("2024-05-01T10:00:00+23:60", "2024-04-30T10:00:00Z"),
    ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"),
    ("2000-02-29T00:00:00Z", "2000-02-29T00:00:00Z"),
    ("1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"),
    ("0001-01-01T00:00:00Z", None),  # Go's zero time: metav1 writes null
    ("0001-01-01T00:00:00.5Z", "0001-01-01T00:00:00Z"),  # not zero: printed to the second
    ("0001-01-01T01:00:00+01:00", None),
    ("0000-01-01T00:30:00+01:00", "-0001-12-31T23:30:00Z"),  # Go prints a negative year so
    ("9999-12-31T23:30:00-01:00", "10000-01-01T00:30:00Z"),
]

TIME_BAD = [
    ("x", f'parsing time "x" as {LAYOUT}: cannot parse "x" as "2006"'),
    ("", f'parsing time "" as {LAYOUT}: cannot parse "" as "2006"'),
    ("2024-05-01", f'parsing time "2024-05-01" as {LAYOUT}: cannot parse "" as "T"'),
    ("2024/05/01T10:00:00Z", (f'parsing time "2024/05/01T10:00:00Z" as {LAYOUT}: cannot parse '
                             f'"/05/01T10:00:00Z" as "-"')),
    ("2024-05-01t10:00:00Z", (f'parsing time "2024-05-01t10:00:00Z" as {LAYOUT}: cannot parse '
                             f'"t10:00:00Z" as "T"')),
    ("2024-05-01 10:00:00Z", (f'parsing time "2024-05-01 10:00:00Z" as {LAYOUT}: cannot parse '
                             f'" 10:00:00Z" as "T"')),
    ("2024-05-01T10:00:00z", (f'parsing time "2024-05-01T10:00:00z" as {LAYOUT}: cannot parse '
                             f'"z" as "Z07:00"')),
    ("2024-05-01T10:00:00", (f'parsing time "2024-05-01T10:00:00" as {LAYOUT}: cannot parse "" '
                            f'as "Z07:00"')),
    ("2024-05-01T10:00:00+0200", (f'parsing time "2024-05-01T10:00:00+0200" as {LAYOUT}: cannot '
                                 f'parse "+0200" as "Z07:00"')),
    ("2024-05-01T10:00:00+2:00", (f'parsing time "2024-05-01T10:00:00+2:00" as {LAYOUT}: cannot '
                                 f'parse "+2:00" as "Z07:00"')),
    ("2024-05-1T10:00:00Z", (f'parsing time "2024-05-1T10:00:00Z" as {LAYOUT}: cannot parse '
                            f'"1T10:00:00Z" as "02"')),
    ("2024-05-01T10:0:00Z", (f'parsing time "2024-05-01T10:0:00Z" as {LAYOUT}: cannot parse '
                            f'"0:00Z" as "04"')),
    ("2016-12-31T23:59:60Z", 'parsing time "2016-12-31T23:59:60Z": second out of range'),
    ("2024-13-01T00:00:00Z", 'parsing time "2024-13-01T00:00:00Z": month out of range'),
    ("2024-00-01T00:00:00Z", 'parsing time "2024-00-01T00:00:00Z": month out of range'),
    ("2024-05-01T24:00:00Z", 'parsing time "2024-05-01T24:00:00Z": hour out of range'),
    ("2024-05-01T10:60:00Z", 'parsing time "2024-05-01T10:60:00Z": minute out of range'),
    ("2023-02-29T00:00:00Z", 'parsing time "2023-02-29T00:00:00Z": day out of range'),
    ("2024-04-31T00:00:00Z", 'parsing time "2024-04-31T00:00:00Z": day out of range'),
    ("2024-05-00T00:00:00Z", 'parsing time "2024-05-00T00:00:00Z": day out of range'),
    ("2024-05-01T10:00:00+25:00", ('parsing time "2024-05-01T10:00:00+25:00": time zone offset '
                                  'hour out of range')),
    ("2024-05-01T10:00:00+25:xx", ('parsing time "2024-05-01T10:00:00+25:xx": time zone offset '
                                  'hour out of range')),  # the range is checked first
    ("2024-05-01T10:00:00+01:61", ('parsing time "2024-05-01T10:00:00+01:61": time zone offset '
                                  'minute out of range')),
    ("2024-05-01T10:00:00Zjunk", 'parsing time "2024-05-01T10:00:00Zjunk": extra text: "junk"'),
    # the time package's quote(), not strconv.Quote: control bytes as \xNN
    ("2024-05-01T10:00:00Z\n", 'parsing time "2024-05-01T10:00:00Z\\x0a": extra text: "\\x0a"'),
    ("é", f'parsing time "\\xc3\\xa9" as {LAYOUT}: cannot parse "\\xc3\\xa9" as "2006"'),
    ('"q"', f'parsing time "\\"q\\"" as {LAYOUT}: cannot parse "\\"q\\"" as "2006"'),
]

MICRO_OK = [
    ("2024-05-01T10:00:00.123456Z", "2024-05-01T10:00:00.123456Z"),
    ("2024-05-01T10:00:00.000000+00:00", "2024-05-01T10:00:00.000000Z"),
    ("2024-05-01T12:00:00.123456+02:00", "2024-05-01T10:00:00.123456Z"),
    ("2024-05-01T10:00:00,123456Z", "2024-05-01T10:00:00.123456Z"),
    ("0001-01-01T00:00:00.000000Z", None),
]

MICRO_BAD = [
    # the Python client's isoformat() of a datetime whose microseconds are 0
    ("2024-05-01T10:00:00+00:00", (f'parsing time "2024-05-01T10:00:00+00:00" as {MICRO}: cannot '
                                  f'parse "+00:00" as ".000000"')),
    ("2024-05-01T10:00:00Z", (f'parsing time "2024-05-01T10:00:00Z" as {MICRO}: cannot parse "Z" '
                             f'as ".000000"')),
    ("2024-05-01T10:00:00.123Z", (f'parsing time "2024-05-01T10:00:00.123Z" as {MICRO}: cannot '
                                 f'parse ".123Z" as ".000000"')),
    ("2024-05-01T10:00:00.123456789Z", (f'parsing time "2024-05-01T10:00:00.123456789Z" as '
                                       f'{MICRO}: cannot parse "789Z" as "Z07:00"')),
    ("2024-05-01T10:00:00.-12345Z", ('parsing time "2024-05-01T10:00:00.-12345Z": fractional '
                                    'second out of range')),
    ("2016-12-31T23:59:60.000000Z", ('parsing time "2016-12-31T23:59:60.000000Z": second out of '
                                    'range')),
]


@pytest.mark.parametrize(("text", "expected"), TIME_OK)
def test_time_reencoded(text: str, expected: str | None) -> None:
    assert gotime.reencode(text, False) == expected


@pytest.mark.parametrize(("text", "message"), TIME_BAD)
def test_time_refused_with_go_message(text: str, message: str) -> None:
    with pytest.raises(gotime.TimeParseError) as caught:
        gotime.reencode(text, False)
    assert str(caught.value) == message


@pytest.mark.parametrize(("text", "expected"), MICRO_OK)
def test_micro_time_reencoded(text: str, expected: str | None) -> None:
    assert gotime.reencode(text, True) == expected


@pytest.mark.parametrize(("text", "message"), MICRO_BAD)
def test_micro_time_refused_with_go_message(text: str, message: str) -> None:
    with pytest.raises(gotime.TimeParseError) as caught:
        gotime.reencode(text, True)
    assert str(caught.value) == message


def test_every_second_of_a_leap_year_round_trips() -> None:
    """The day arithmetic against Python's own calendar, one instant per hour for 4 years."""
    import datetime
    start = datetime.datetime(2023, 1, 1, tzinfo=datetime.UTC)
    for hours in range(0, 4 * 366 * 24, 7):
        moment = start + datetime.timedelta(hours=hours, seconds=hours % 60)
        text = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
        instant = gotime.parse(gotime.RFC3339, text)
        assert instant.seconds == int(moment.timestamp())
        assert gotime.format_utc(instant, False) == text
