"""JSON answers and query parsing shared by the console's route modules.

Kubernetes piece: the API server's JSON writer (apiserver/render.py) and its query parsing's
400s (a bad `limit` is a BadRequest Status), cut down to what the console's endpoints take.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from ..api import errors


def json_response(body: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(body), content_type="application/json",
                        headers={"Cache-Control": "no-store"})


def int_param(query: Any, name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter in [low, high]; anything else is a 400 Status."""
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        number = int(raw)
    except ValueError:
        raise errors.bad_request(f"{name}: invalid value {raw!r}: must be an integer") from None
    if not low <= number <= high:
        raise errors.bad_request(f"{name}: invalid value {number}: must be between {low} and "
                                 f"{high}")
    return number
