"""Every console error is a Kubernetes Status in JSON, with the Status' code as HTTP status.

Kubernetes piece: apiserver's responsewriters.ErrorNegotiated / status.go — the console is not
the API server, but it answers like one so the page shows the message upstream would (an
action's 409 or 422 from the API server is relayed as it came). An unknown /console-api path
is a 404 Status, a handler's unexpected exception a logged 500 Status (never a traceback page).
"""

from __future__ import annotations

import orjson
import structlog
from aiohttp import web

from ..api import errors
from ..api.errors import StatusError

log = structlog.get_logger(component="console")


def status_response(error: StatusError) -> web.Response:
    return web.Response(status=error.code, body=orjson.dumps(error.status()),
                        content_type="application/json", headers=error.headers or None)


def parse_json_object(raw: bytes) -> dict:
    """A POST body: empty means {}, anything but a JSON object is a 400 Status."""
    if not raw.strip():
        return {}
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise errors.bad_request(f"the request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise errors.bad_request("the request body must be a JSON object")
    return body


@web.middleware
async def middleware(request: web.Request, handler: web.RequestHandler) -> web.StreamResponse:
    try:
        return await handler(request)
    except StatusError as exc:
        return status_response(exc)
    except web.HTTPException as exc:
        if exc.status_code < 400:
            raise  # a redirect
        if exc.status_code == 404:
            return status_response(errors.not_found_path())
        if exc.status_code == 405:
            return status_response(errors.method_not_allowed())
        return status_response(StatusError(exc.status_code, exc.reason, exc.text or exc.reason))
    except (ConnectionResetError, ConnectionError):
        raise
    except Exception as exc:  # a bug: logged, answered as upstream's InternalError
        log.exception("console handler failed", path=request.path)
        return status_response(errors.internal_error(f"console: {exc}"))
