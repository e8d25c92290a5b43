"""`GET /console-api/nodes` and `GET /console-api/pods[?namespace=]`: the cluster views' JSON.

Kubernetes piece: `kubectl get nodes` + `kubectl describe node`'s allocated resources, and
`kubectl get pods -A -o wide` — read from the console's shared informers (feeds.py), shaped by
shaping.py. A big cluster's shaping runs on the offload worker (offload.py) so the control
plane's loop keeps serving meanwhile.
"""

from __future__ import annotations

import time

from aiohttp import web

from .. import offload
from .context import ConsoleContext
from .shaping import nodes_view, pods_view
from .views_json import json_response

#: roughly the bytes of JSON walked per object when shaping (weighs the offload decision)
BYTES_PER_OBJECT = 1500


def routes(ctx: ConsoleContext) -> list[web.RouteDef]:
    async def nodes(request: web.Request) -> web.Response:
        feeds = ctx.feeds
        await feeds.ready()
        node_list, pod_list = feeds.node_list(), feeds.pod_list()
        rows = await offload.run(nodes_view, node_list, pod_list,
                                 weight=(len(node_list) + len(pod_list)) * BYTES_PER_OBJECT)
        return json_response({"items": rows})

    async def pods(request: web.Request) -> web.Response:
        feeds = ctx.feeds
        await feeds.ready()
        pod_list = feeds.pod_list()
        rows = await offload.run(pods_view, pod_list, time.time(),
                                 request.query.get("namespace", ""),
                                 weight=len(pod_list) * BYTES_PER_OBJECT)
        return json_response({"items": rows})

    return [web.get("/console-api/nodes", nodes), web.get("/console-api/pods", pods)]
