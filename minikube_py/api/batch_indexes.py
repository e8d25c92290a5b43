"""Completed/failed index sets of Indexed Jobs in their wire form (`1,3-5,7`).

Kubernetes piece: pkg/controller/job/indexed_job_utils.go (parseIndexesFromString,
orderedIntervals.String) and validation's validateIndexesFormat: intervals in increasing
order, `a-b` with a < b, every index below the completions. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

#: the largest index count (validation's limit on an Indexed Job's completions); also the
#: bound when no completions are known, so a hostile string cannot name billions of indexes
MAX_INDEXES = 100_000


def parse_indexes(text: str, completions: int) -> set[int]:
    """The set a `1,3-5` string names; ValueError with upstream-like wording when malformed
    or out of range (`completions` 0: below MAX_INDEXES)."""
    if not isinstance(text, str):
        raise TypeError("must be a string")
    out: set[int] = set()
    if not text:
        return out
    last = -1
    limit = min(completions, MAX_INDEXES) if completions > 0 else MAX_INDEXES
    parts = text.split(",")
    if len(parts) > MAX_INDEXES:
        raise ValueError("too many intervals")
    for part in parts:
        lo_text, sep, hi_text = part.partition("-")
        try:
            lo = int(lo_text)
            hi = int(hi_text) if sep else lo
        except ValueError:
            raise ValueError(f"cannot convert string to integer for index: {part!r}") from None
        if lo < 0 or hi < 0:
            raise ValueError("index must be non-negative")
        if sep and lo >= hi:
            raise ValueError(f"non-increasing order, previous: {lo}, current: {hi}")
        if lo <= last:
            raise ValueError(f"non-increasing order, previous: {last}, current: {lo}")
        if hi >= limit:
            raise ValueError(f"too large: {hi}")
        out.update(range(lo, hi + 1))
        last = hi
    return out


def format_indexes(indexes: Iterable[int]) -> str:
    """`{1,3,4,5,7}` -> `1,3-5,7`: every run of consecutive indexes is `a-b`, as upstream's
    orderedIntervals.String writes it (a run of two too: `3-4`)."""
    ordered = sorted(set(indexes))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)
