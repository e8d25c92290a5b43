"""The console's actions, `POST /console-api/actions/...`, and `GET /console-api/components`.

Kubernetes piece: the commands a learner would type — `kubectl create deployment`,
`systemctl stop kubelet` on a node (here the kubelet pool's toggle, as `minikube-py node
stop|start`), and pausing a component (minikube_py.pausing: the scheduler or a controller
stops taking work, to watch the queue grow; the same gates as the API server's
/debug/components). A failure is the API server's Status, or a 404 / 503 Status of the
console's own, never a 500.
"""

from __future__ import annotations

from aiohttp import web

from ..api import errors
from ..api.errors import StatusError
from ..client.resources import DEPLOYMENTS, NAMESPACES
from .actions import sample_workload
from .context import ConsoleContext
from .errors import parse_json_object
from .views_json import json_response


def routes(ctx: ConsoleContext) -> list[web.RouteDef]:
    async def create_sample(request: web.Request) -> web.Response:
        namespace, deployment = sample_workload(parse_json_object(await request.read()))
        client = ctx.client("minikube-py-console")
        try:
            if namespace != "default":
                try:
                    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": namespace}})
                except StatusError as exc:
                    if exc.code != 409:
                        raise
            created = await client.create(DEPLOYMENTS, deployment, namespace)
        finally:
            await client.close()
        return json_response({"namespace": namespace, "name": created["metadata"]["name"],
                              "replicas": created["spec"]["replicas"]}, 201)

    async def toggle_node(request: web.Request) -> web.Response:
        name, action = request.match_info["name"], request.match_info["action"]
        pool = ctx.component("kubelet")
        if pool is None:
            raise errors.service_unavailable("this cluster runs no simulated kubelets")
        try:
            kubelet = pool.kubelet(name)
        except KeyError:
            raise errors.not_found("nodes", name) from None
        if action == "stop":
            await pool.stop_node(name)
        else:
            await pool.start_node(name)
        return json_response({"name": name, "running": bool(kubelet.running)})

    async def components(request: web.Request) -> web.Response:
        names = [c.name for c in ctx.cluster.components if c.listed] if ctx.cluster else []
        return json_response({"components": names, "pausable": ctx.pauses.snapshot()})

    async def pause(request: web.Request) -> web.Response:
        name, action = request.match_info["name"], request.match_info["action"]
        try:
            gate = ctx.pauses.get(name)
        except KeyError:  # what /debug/components answers (apiserver/debug_components.py)
            raise errors.not_found("components", name) from None
        if action == "pause":
            gate.pause()
        else:
            gate.resume()
        return json_response(gate.to_dict())

    return [
        web.post("/console-api/actions/sample-workload", create_sample),
        web.post("/console-api/actions/nodes/{name}/{action:stop|start}", toggle_node),
        web.get("/console-api/components", components),
        web.post("/console-api/actions/components/{name}/{action:pause|resume}", pause),
    ]
