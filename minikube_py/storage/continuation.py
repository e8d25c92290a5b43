"""Continue tokens for paged range reads.

Kubernetes v1.0 piece: none — paging arrived in v1.9 (apiserver/pkg/storage/etcd3
`encodeContinue`/`decodeContinue`). Like upstream, the token carries the revision of the first
page and the next key, so every page reads the same snapshot, and a token whose revision was
compacted fails as compacted (410 Expired at the API). Both backends share this codec so a
token from one is understood by the other's tests.
"""

from __future__ import annotations

import base64
import binascii

import orjson

from .errors import InvalidContinueError

_VERSION = "m1"


def encode_continue(*, prefix: str, next_key: str, revision: int) -> str:
    """Token naming where the next page starts and at which revision it must be read.

    Only the part of the key after the prefix is stored, so a token cannot be replayed
    against another prefix to read keys outside it.
    """
    if not next_key.startswith(prefix):
        raise ValueError(f"next key {next_key!r} is outside prefix {prefix!r}")
    body = orjson.dumps({"v": _VERSION, "rv": revision, "start": next_key[len(prefix) :]})
    return base64.urlsafe_b64encode(body).decode("ascii").rstrip("=")


def decode_continue(token: str, *, prefix: str) -> tuple[str, int]:
    """Return (start_key, revision) of a token made by encode_continue for `prefix`."""
    try:
        padded = token + "=" * (-len(token) % 4)
        body = orjson.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        if body["v"] != _VERSION:
            raise InvalidContinueError(f"continue token has unknown version {body['v']!r}")
        start, revision = body["start"], body["rv"]
        if not isinstance(start, str) or not isinstance(revision, int) or revision <= 0:
            raise InvalidContinueError("continue token is malformed")
    except InvalidContinueError:
        raise
    except (binascii.Error, UnicodeError, orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise InvalidContinueError(f"continue token is malformed: {exc}") from exc
    return prefix + start, revision
