"""What serving a request needs from the API server — and nothing else.

Kubernetes piece: the `APIGroupVersion`/`RequestScope` upstream hands its REST handlers
(k8s.io/apiserver endpoints: the storage, admission, the serializers, options) instead of the
whole GenericAPIServer. Here the resource handlers, the subresources (proxy, exec/attach/
port-forward, scale, binding) and the watch server receive a `Serving`: the resource table,
the options, the admission chain, the component statuses, the metrics and the watch clock.
They never import the server, so the server can own them without an import circle, and the
subresources reach the generic verbs through the `Verbs` protocol rather than the handlers'
module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from aiohttp import web

from ..registry.generic import Registry
from .admission.chain import AdmissionChain
from .authz.guard import Guard
from .componentstatus import ComponentStatuses
from .metrics import APIServerMetrics
from .options import APIServerOptions
from .resource_table import ResourceTable
from .watch_clock import WatchClock

Obj = dict[str, Any]


@dataclass
class Serving:
    resources: ResourceTable
    options: APIServerOptions
    admission: AdmissionChain
    component_statuses: ComponentStatuses
    metrics: APIServerMetrics
    watch_clock: WatchClock
    #: the secure port's authn + authz (None when it checks nobody); the access reviews ask it
    guard: Guard | None = None
    #: service-account tokens (serviceaccount/config.py); None: TokenRequest is not served
    tokens: Any = None


class Verbs(Protocol):
    """The generic verbs subresources build on (a scale write is an update of the main
    resource, a binding is admitted like any create): implemented by handlers.ResourceHandlers."""

    serving: Serving

    async def get(self, request: web.Request, registry: Registry, namespace: str,
                  name: str) -> web.Response: ...

    async def update(self, request: web.Request, registry: Registry, namespace: str, name: str,
                     subresource: str) -> web.Response: ...

    async def patch(self, request: web.Request, registry: Registry, namespace: str, name: str,
                    subresource: str) -> web.Response: ...

    async def admit(self, request: web.Request, operation: str, registry: Registry,
                    namespace: str, name: str, subresource: str, obj: Obj | None,
                    old: Obj | None = None) -> None: ...
