"""API errors as the client sees them: the server's Status, typed.

Kubernetes v1.0 piece: pkg/api/errors on the client side (errors.IsNotFound, IsConflict,
IsAlreadyExists; the watch's 410 -> relist rule). The client raises the same StatusError the
server renders, rebuilt from the Status body, so callers test `exc.code` / `exc.reason`.
"""

from __future__ import annotations

import orjson

from ..api.errors import StatusError


def error_from_response(status: int, body: bytes) -> StatusError:
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return error_from_status(doc, status)
    text = body.decode(errors="replace")[:500]
    return StatusError(status, "Unknown", f"the server answered {status}: {text}")


def error_from_status(doc: dict, status: int | None = None) -> StatusError:
    return StatusError(int(doc.get("code") or status or 500), str(doc.get("reason", "")),
                       str(doc.get("message", "")), doc.get("details"))


def is_not_found(exc: BaseException) -> bool:
    return isinstance(exc, StatusError) and exc.code == 404


def is_conflict(exc: BaseException) -> bool:
    return isinstance(exc, StatusError) and exc.code == 409


def is_already_exists(exc: BaseException) -> bool:
    """A create of a name that is taken (409 AlreadyExists, not a write Conflict)."""
    return isinstance(exc, StatusError) and exc.code == 409 and exc.reason == "AlreadyExists"


def is_gone(exc: BaseException) -> bool:
    return isinstance(exc, StatusError) and exc.code == 410


def is_already_exists(exc: BaseException) -> bool:
    return isinstance(exc, StatusError) and exc.code == 409 and exc.reason == "AlreadyExists"
