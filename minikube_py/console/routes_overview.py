"""`GET /console-api/overview`: the overview's one JSON, polled once a second.

Kubernetes piece: none upstream — the architecture picture of the v1.0 docs
(docs/design/architecture.md) made live: the store's current revision (the resourceVersion
the next write exceeds), nodes by Ready and pods by phase (the shared informers' caches), and
requests per second per component (rates.py, from the trace ring).
"""

from __future__ import annotations

from aiohttp import web

from .. import offload
from ..trace.records import KINDS
from .context import ConsoleContext
from .shaping import overview
from .views_json import json_response

#: counting an object's phase or Ready condition walks ~1/10 of what shaping its row does
BYTES_PER_COUNT = 150


def routes(ctx: ConsoleContext) -> list[web.RouteDef]:
    async def handle(request: web.Request) -> web.Response:
        feeds = ctx.feeds
        await feeds.ready()
        revision = (await ctx.store.range("/", limit=1)).revision
        nodes, pods = feeds.node_list(), feeds.pod_list()
        body = await offload.run(overview, nodes, pods, revision, ctx.rates.sample(),
                                 weight=(len(nodes) + len(pods)) * BYTES_PER_COUNT)
        body["trace"] = {"kinds": list(KINDS), "lost": ctx.rates.lost}
        return json_response(body)

    return [web.get("/console-api/overview", handle)]
