"""Object metadata helpers: uids, timestamps, generateName.

Kubernetes v1.0 piece: pkg/api/rest (FillObjectMetaSystemFields, the names.SimpleNameGenerator)
and pkg/util time formatting. Small and pure (the clock and randomness are injectable) so the
registry's create path reads like upstream's BeforeCreate.
"""

from __future__ import annotations

import os
import random
import time
from datetime import datetime, timezone
from typing import Any

#: upstream names.SimpleNameGenerator: 5 characters from an alphabet without vowels and
#: look-alike characters, so generated names never spell words.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATED_SUFFIX_LENGTH = 5
MAX_NAME_LENGTH = 63  # generateName base is truncated so base+suffix fits a DNS label


_last_second: list = [None, ""]


def rfc3339(epoch: float) -> str:
    """`2026-11-21T10:00:00Z` (metav1.Time is second precision on the wire). The last second
    formatted is remembered: every write stamps the current second, often thousands of times."""
    second = int(epoch)
    if _last_second[0] != second:
        _last_second[1] = datetime.fromtimestamp(second, timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
        _last_second[0] = second
    return _last_second[1]


def now_rfc3339() -> str:
    return rfc3339(time.time())


def rfc3339_micro(epoch: float) -> str:
    """`2026-11-21T10:00:00.123456Z`: a metav1.MicroTime (Lease renewTime, Event eventTime)
    as upstream marshals it, always six fraction digits, UTC."""
    micros = round(epoch * 1_000_000)
    second, fraction = divmod(micros, 1_000_000)
    return f"{rfc3339(second)[:-1]}.{fraction:06d}Z"


def parse_rfc3339(text: str) -> float:
    """Seconds since the epoch; raises ValueError on bad input."""
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    return datetime.fromisoformat(text).timestamp()


#: uids only need to be unique, not secret: a Random seeded from the OS is ~10x cheaper than
#: uuid4's os.urandom call per object
_uid_random = random.Random(int.from_bytes(os.urandom(32), "big"))


#: RFC 4122 version 4: the version nibble and the variant bits cleared, then set
_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48)) & ((1 << 128) - 1)
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)


def new_uid() -> str:
    """A random (version 4) UUID, as upstream's uuid.NewRandom. Formatted by hand: the same
    string as `str(uuid.UUID(int=..., version=4))` at a third of its cost (every create)."""
    h = "%032x" % (_uid_random.getrandbits(128) & _UUID4_CLEAR | _UUID4_SET)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def generate_name(base: str, rng: random.Random | None = None) -> str:
    base = base[: MAX_NAME_LENGTH - GENERATED_SUFFIX_LENGTH]
    # one choices() call: every pod create names its token volume this way
    return base + "".join((rng or random).choices(_NAME_ALPHABET, k=GENERATED_SUFFIX_LENGTH))


def metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """The object's metadata dict, created if absent or not a dict."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta
