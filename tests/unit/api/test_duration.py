"""duration.human_duration / age: upstream HumanDuration's cases plus the boundaries."""

from __future__ import annotations

import pytest

from minikube_py.api.duration import age, human_duration, parse_timestamp

MINUTE, HOUR, DAY = 60, 3600, 86400


@pytest.mark.parametrize(("seconds", "want"), [
    # apimachinery duration_test.go TestHumanDuration
    (1, "1s"),
    (70, "70s"),
    (190, "3m10s"),
    (70 * MINUTE, "70m"),
    (47 * HOUR, "47h"),
    (49 * HOUR, "2d1h"),
    ((8 * 24 + 2) * HOUR, "8d"),
    (367 * DAY, "367d"),
    ((365 * 2 * 24 + 25) * HOUR, "2y1d"),
    ((365 * 8 * 24 + 2) * HOUR, "8y"),
    # boundaries of each band
    (0, "0s"),
    (0.999, "0s"),
    (119.9, "119s"),
    (120, "2m"),
    (302, "5m2s"),
    (9 * MINUTE + 59, "9m59s"),
    (10 * MINUTE + 59, "10m"),
    (179 * MINUTE, "179m"),
    (3 * HOUR, "3h"),
    (3 * HOUR + 30 * MINUTE, "3h30m"),
    (8 * HOUR + 59 * MINUTE, "8h"),
    (48 * HOUR, "2d"),
    (365 * 2 * DAY, "2y"),
    # clock skew: up to 2 s (exclusive) in the future is "now"
    (-1.5, "0s"),
    (-1, "0s"),
    (-2, "<invalid>"),
    (-3600, "<invalid>"),
])
def test_human_duration(seconds: float, want: str) -> None:
    assert human_duration(seconds) == want


T0 = "2024-05-01T12:00:00Z"
T0_EPOCH = 1714564800.0


@pytest.mark.parametrize(("timestamp", "now", "want"), [
    (T0, T0_EPOCH + 302, "5m2s"),
    (T0, T0_EPOCH, "0s"),
    (T0, T0_EPOCH - 5, "<invalid>"),
    ("2024-05-01T12:00:00.500000Z", T0_EPOCH + 61, "60s"),  # MicroTime
    ("2024-05-01T14:00:00+02:00", T0_EPOCH + 3 * DAY, "3d"),
    (None, T0_EPOCH, "<unknown>"),
    ("", T0_EPOCH, "<unknown>"),
    ("yesterday", T0_EPOCH, "<unknown>"),
    ("0001-01-01T00:00:00Z", T0_EPOCH, "<unknown>"),  # Go's zero time
])
def test_age(timestamp: str | None, now: float, want: str) -> None:
    assert age(timestamp, now) == want


@pytest.mark.parametrize("value", [None, 5, [], {}, "", "2024-13-45T00:00:00Z"])
def test_parse_timestamp_rejects_non_timestamps(value: object) -> None:
    assert parse_timestamp(value) is None


def test_parse_timestamp() -> None:
    assert parse_timestamp(T0) == T0_EPOCH
