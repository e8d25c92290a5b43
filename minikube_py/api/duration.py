"""Human-readable ages: `5m2s`, `3h`, `2d4h`, `<unknown>`, `<invalid>`.

Kubernetes piece: k8s.io/apimachinery/pkg/util/duration.HumanDuration and the printers'
translateTimestampSince (pkg/printers/internalversion/printers.go). kubectl has no client-side
printers for built-in types, so the AGE column (and RESTARTS' "(5m ago)", events' LAST SEEN)
is whatever string the API server puts into its Table cells; kubectl prints it verbatim.
Matching upstream's rounding rules exactly keeps our `kubectl get` output identical to a
real cluster's, which is what scripts and people compare against.

Why a parse cache: one list of N pods asks for N ages, and those timestamps repeat across
requests (every `get -w` row, every re-list), so parsing RFC 3339 is memoised.
"""

from __future__ import annotations

import functools

from minikube_py.api.meta import parse_rfc3339

UNKNOWN = "<unknown>"
INVALID = "<invalid>"

_NS_PER_SECOND = 1_000_000_000
_NS_PER_MINUTE = 60 * _NS_PER_SECOND
_NS_PER_HOUR = 60 * _NS_PER_MINUTE
_GO_ZERO_TIME = -62135596800.0  # 0001-01-01T00:00:00Z, Go's time.Time{}


def human_duration(seconds: float) -> str:
    """Upstream duration.HumanDuration: ~2-3 significant figures of a duration.

    Tolerates up to 2 s (exclusive) of clock skew as "0s"; anything further in the future is
    `<invalid>`. Below 2 minutes it counts seconds, below 10 minutes `XmYs`, below 3 hours
    minutes, below 8 hours `XhYm`, below 2 days hours, below 8 days `XdYh`, below 2 years days,
    below 8 years `XyYd`, then years. Integer division truncates like Go's conversions."""
    ns = int(seconds * _NS_PER_SECOND)
    whole_seconds = _trunc_div(ns, _NS_PER_SECOND)
    if whole_seconds < -1:
        return INVALID
    if whole_seconds < 0:
        return "0s"
    if whole_seconds < 60 * 2:
        return f"{whole_seconds}s"
    minutes = ns // _NS_PER_MINUTE
    if minutes < 10:
        secs = whole_seconds % 60
        return f"{minutes}m" if secs == 0 else f"{minutes}m{secs}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = ns // _NS_PER_HOUR
    if hours < 8:
        mins = minutes % 60
        return f"{hours}h" if mins == 0 else f"{hours}h{mins}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def _trunc_div(a: int, b: int) -> int:
    """Go's integer conversion truncates toward zero (-1.5 s is -1 s), Python's // floors."""
    q = abs(a) // b
    return q if a >= 0 else -q


def age(timestamp: str | None, now: float) -> str:
    """Upstream translateTimestampSince: `<unknown>` for a missing (zero) timestamp, else the
    human duration from `timestamp` (RFC 3339) to `now` (epoch seconds).

    An unparseable timestamp also reads `<unknown>`: a table cell must never fail a list."""
    epoch = parse_timestamp(timestamp)
    if epoch is None:
        return UNKNOWN
    return human_duration(now - epoch)


def parse_timestamp(timestamp: object) -> float | None:
    """Epoch seconds of an RFC 3339 string, or None if missing, empty or malformed."""
    if not isinstance(timestamp, str) or not timestamp:
        return None
    return _parse_cached(timestamp)


@functools.lru_cache(maxsize=8192)
def _parse_cached(timestamp: str) -> float | None:
    try:
        epoch = parse_rfc3339(timestamp)
    except (ValueError, OverflowError, OSError):
        return None
    return None if epoch == _GO_ZERO_TIME else epoch  # metav1.Time.IsZero()
