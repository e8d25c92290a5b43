"""`GET /console-api/events` (the newest events) and `GET /console-api/events/stream` (the
same, then each new or updated Event as it is watched, as Server-Sent Events).

Kubernetes piece: `kubectl get events -A --watch`. Every tab reads the console's one events
informer (feeds.py): a new tab gets the cached newest `limit` rows, then the rows the watch
delivers; a row's `key` (namespace/name) repeats when an Event's count goes up, so the page
replaces it. A keepalive comment every KEEPALIVE seconds notices a tab that went away.
"""

from __future__ import annotations

import asyncio
import contextlib

import orjson
from aiohttp import web

from .. import offload
from .context import ConsoleContext
from .shaping import recent_events
from .views_json import int_param, json_response

KEEPALIVE = 15.0
DEFAULT_LIMIT = 200
MAX_LIMIT = 5000


#: roughly the bytes of an Event walked to shape its row (weighs the offload decision)
BYTES_PER_EVENT = 800


async def newest(events: list, limit: int) -> list:
    """recent_events, on the offload worker when there are many (offload.py)."""
    return await offload.run(recent_events, events, limit,
                             weight=len(events) * BYTES_PER_EVENT)


def sse(data: object) -> bytes:
    return b"data: " + orjson.dumps(data) + b"\n\n"


def routes(ctx: ConsoleContext) -> list[web.RouteDef]:
    async def events(request: web.Request) -> web.Response:
        limit = int_param(request.query, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        feeds = ctx.feeds
        await feeds.ready()
        return json_response({"items": await newest(feeds.event_list(), limit)})

    async def stream(request: web.Request) -> web.StreamResponse:
        limit = int_param(request.query, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        feeds = ctx.feeds
        await feeds.ready()
        follower = feeds.follow()  # before the snapshot: nothing falls between the two
        response = web.StreamResponse(headers={
            "Content-Type": "text/event-stream", "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no"})
        try:
            await response.prepare(request)
            rows = await newest(feeds.event_list(), limit)
            await response.write(b"".join(sse(row) for row in rows) or b": empty\n\n")
            while not follower.closed:
                try:
                    row = await asyncio.wait_for(follower.queue.get(), KEEPALIVE)
                except TimeoutError:
                    await response.write(b": keepalive\n\n")
                    continue
                batch = [sse(row)]
                while not follower.queue.empty():
                    batch.append(sse(follower.queue.get_nowait()))
                await response.write(b"".join(batch))
        except (ConnectionError, asyncio.CancelledError):
            pass  # the tab went away, or the console stops
        finally:
            feeds.unfollow(follower)
        with contextlib.suppress(ConnectionError, RuntimeError):
            await response.write_eof()
        return response

    return [web.get("/console-api/events", events),
            web.get("/console-api/events/stream", stream)]
