"""A simulated ingress controller: an IngressClass, load-balancer status, and HTTP routing.

Kubernetes piece: none in kubernetes/kubernetes — ingress controllers (ingress-nginx, which
minikube's `ingress` addon installs) live out of tree. This one is a teaching stand-in that
`minikube-py start --ingress` runs:
- like an addon manifest, `install` creates (when missing) the IngressClass `minikube-py`
  (controller `minikube-py.io/ingress`, annotated as the cluster default, so the
  DefaultIngressClass admission plugin gives it to Ingresses without a class), a ClusterRole
  with what the controller needs and a ClusterRoleBinding to its service account
  `kube-system:ingress-controller`, whose identity it then runs as;
- every Ingress of the class gets `status.loadBalancer.ingress: [{ip: <listen address>}]`
  (what `kubectl get ingress` prints as ADDRESS);
- an HTTP listener routes each request by Host header and path (ingress_routing.py) to the
  backend Service through the API server's `services/<name>:<port>/proxy` — which reaches a
  ready endpoint pod's simulated HTTP server (kubelet/http_sim.py), so `curl -H 'Host:
  foo.example.com' http://127.0.0.1:8081/` answers `pod web-... (10.244.0.5) GET /`. No
  backend matches: 404 `default backend - 404`, as ingress-nginx's default backend.
Not simulated: TLS termination, annotations (rewrites, auth), nginx's config reloads.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any
from urllib.parse import quote

import structlog
from aiohttp import web

from ..client import Client
from ..client.cache import Informer
from ..client.errors import StatusError
from ..client.resources import INGRESS_CLASSES, INGRESSES, Resource
from .ingress_routing import Backend, of_class, route

log = structlog.get_logger(component="ingress-controller")

Obj = dict[str, Any]

CLASS_NAME = "minikube-py"
CONTROLLER_NAME = "minikube-py.io/ingress"
SERVICE_ACCOUNT = "ingress-controller"
ROLE_NAME = "minikube-py:ingress-controller"
CLUSTER_ROLES = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", False,
                         "ClusterRole")
CLUSTER_ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings",
                                 False, "ClusterRoleBinding")
#: what the controller does, and nothing more (ingress-nginx's ClusterRole reads ingresses,
#: classes and services and writes ingresses/status; services/proxy stands in for dialing
#: pod IPs, which simulated pods do not have)
RULES = [
    {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "ingressclasses"],
     "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses/status"],
     "verbs": ["update", "patch"]},
    {"apiGroups": [""], "resources": ["services"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["services/proxy"],
     "verbs": ["get", "create", "update", "patch", "delete"]},
]
#: request headers not forwarded (hop-by-hop, or recomputed by the proxy)
_DROP = frozenset({"host", "connection", "keep-alive", "transfer-encoding", "upgrade",
                   "content-length", "authorization"})


def addon_objects() -> list[tuple[Resource, Obj]]:
    """The objects `install` creates, as an addon manifest would list them."""
    ingress_class = {
        "apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": CLASS_NAME, "annotations": {
            "ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": CONTROLLER_NAME}}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": ROLE_NAME}, "rules": RULES}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": ROLE_NAME},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": ROLE_NAME},
               "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT,
                             "namespace": "kube-system"}]}
    return [(INGRESS_CLASSES, ingress_class), (CLUSTER_ROLES, role),
            (CLUSTER_ROLE_BINDINGS, binding)]


async def install(admin: Client) -> list[str]:
    """Create the addon's objects that do not exist yet (an existing one is left as the user
    made it); returns the names created."""
    created = []
    for resource, obj in addon_objects():
        name = obj["metadata"]["name"]
        if await admin.get_or_none(resource, name) is None:
            try:
                await admin.create(resource, obj)
                created.append(f"{resource.plural}/{name}")
            except StatusError as exc:
                if exc.code != 409:
                    raise
    return created


def wanted_status(ingress: Obj, address: str) -> Obj:
    return {**(ingress.get("status") or {}), "loadBalancer": {"ingress": [{"ip": address}]}}


class IngressController:
    """Keeps the class's Ingresses' status and serves their routes on `port`."""

    def __init__(self, client: Client, *, address: str = "127.0.0.1", port: int = 8081,
                 class_name: str = CLASS_NAME, sock: socket.socket | None = None) -> None:
        """`sock`: a socket already bound and listening (`start` binds every port first),
        served instead of binding address:port."""
        self.client = client
        self.address = address
        self.port = port
        self._sock = sock
        self.class_name = class_name
        #: the address written into status (a wildcard bind is reached on loopback)
        self.status_ip = "127.0.0.1" if address in ("0.0.0.0", "::", "") else address
        self.informer = Informer(client, INGRESSES)
        self._pending: asyncio.Queue[str] = asyncio.Queue()
        self._task: asyncio.Task | None = None
        self._runner: web.AppRunner | None = None

    # -- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        """Start watching Ingresses and listening; returns once both are up (the bound port
        is read back into `port`, so port 0 picks a free one)."""
        self.informer.add_event_handler(
            on_add=self._enqueue, on_update=lambda _old, new: self._enqueue(new))
        self.informer.start()
        await self.informer.wait_for_sync(30)
        self._task = asyncio.create_task(self._status_worker(), name="ingress-status")
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = (web.SockSite(self._runner, self._sock) if self._sock is not None
                else web.TCPSite(self._runner, self.address, self.port))
        await site.start()
        self.port = self._runner.addresses[0][1]
        log.info("ingress controller serving", address=self.address, port=self.port,
                 ingress_class=self.class_name)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.informer.stop()

    # -- status --------------------------------------------------------------------------
    def _enqueue(self, ingress: Obj) -> None:
        if of_class(ingress, self.class_name):
            md = ingress.get("metadata") or {}
            self._pending.put_nowait(f"{md.get('namespace')}/{md.get('name')}")

    async def _status_worker(self) -> None:
        while True:
            key = await self._pending.get()
            ingress = self.informer.indexer.get(key)
            if ingress is None or not of_class(ingress, self.class_name):
                continue
            wanted = wanted_status(ingress, self.status_ip)
            if ingress.get("status") == wanted:
                continue
            try:
                await self.client.update_status(INGRESSES, {**ingress, "status": wanted})
            except StatusError as exc:
                if exc.code == 409:  # a newer version is on its way through the informer
                    continue
                log.warning("ingress status update failed", ingress=key, error=str(exc))
                await asyncio.sleep(1.0)
                self._pending.put_nowait(key)

    # -- routing -------------------------------------------------------------------------
    def ingresses(self) -> list[Obj]:
        return [i for i in self.informer.indexer.list() if of_class(i, self.class_name)]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        backend = route(self.ingresses(), request.host, request.path)
        if backend is None:
            return web.Response(status=404, text="default backend - 404\n")
        return await self._proxy(request, backend)

    async def _proxy(self, request: web.Request, backend: Backend) -> web.StreamResponse:
        path = (f"/api/v1/namespaces/{quote(backend.namespace, safe='')}/services/"
                f"{quote(backend.service, safe='')}:{quote(backend.port, safe='')}/proxy"
                f"{request.raw_path.split('?', 1)[0]}")
        body = await request.read() if request.can_read_body else None
        response = await self.client.transport.request(
            request.method, path, query=dict(request.query), body=body or None,
            content_type=request.headers.get("Content-Type", "application/octet-stream"),
            accept=request.headers.get("Accept", "*/*"))
        if response.status >= 400 and response.content_type.startswith("application/json"):
            # the API server's Status (no endpoints, pod not serving): the gateway's answer
            log.info("ingress backend unavailable", backend=backend.service,
                     status=response.status, answer=response.body[:300].decode(errors="replace"))
            return web.Response(status=503 if response.status in (503, 404) else 502,
                                text="503 Service Temporarily Unavailable\n")
        return web.Response(status=response.status, body=response.body,
                            content_type=response.content_type.split(";")[0] or None,
                            headers={"X-Ingress": f"{backend.namespace}/{backend.ingress}"})
