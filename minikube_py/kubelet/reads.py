"""What a kubelet reads about the cluster besides its own pods: ConfigMaps, Secrets, Services.

Kubernetes pieces: pkg/kubelet/configmap and pkg/kubelet/secret managers with the `Watch`
change-detection strategy (the default, `--config-map-and-secret-change-detection-strategy`),
and the kubelet's Service lister (pkg/kubelet/kubelet.go `serviceLister`, fed by an informer).
Upstream's kubelet does not GET a ConfigMap each time a pod starts: the managers keep a watch on
every object its pods reference and answer from that cache, and service links come from an
informer over all Services.

Here, in the all-in-one process, the pool's kubelets read through the process's shared informers
(the same factory the controllers share, as the pool already does for pods): a cache hit costs no
request at all, where a GET per volume, per environment source and a LIST of the namespace's
Services per container cost ~4 requests per pod — a fifth of a Job's whole life. The data is as
fresh as upstream's watch-based managers give it. A miss (an object created a moment ago that
the watch has not delivered yet, or a cache not synced yet) falls back to a GET as the node, so a
pod never fails to mount what exists; outside the all-in-one process (no shared informers) every
read is a GET, as v1.0's kubelet did. The shared caches are read for objects the node's own pods
name, which the Node authorizer would let the node read anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api.errors import StatusError
from ..client.cache import NAMESPACE_INDEX, Informer, InformerFactory, meta_namespace_index
from ..client.resources import CONFIGMAPS, SECRETS, SERVICES, Resource

Obj = dict[str, Any]

#: resources read from a shared informer when the process has one
CACHED = (CONFIGMAPS, SECRETS, SERVICES)


def shared_informers(factory: InformerFactory) -> dict[Resource, Informer]:
    """The process's informers the kubelets read (one set for the whole pool); Services get
    the namespace index the controllers' shared Service informer has (service links)."""
    return {resource: factory.informer(
        resource, indexers={NAMESPACE_INDEX: meta_namespace_index} if resource == SERVICES
        else None) for resource in CACHED}


class ClusterReads:
    """GET/LIST facade a kubelet's volume and environment code reads through: the shared
    informers' caches first, the API (as the node) on a miss."""

    def __init__(self, client: Any,
                 informers: Mapping[Resource, Informer] | None = None) -> None:
        self.client = client
        self._informers = informers or {}

    def _cache(self, resource: Resource) -> Informer | None:
        informer = self._informers.get(resource)
        return informer if informer is not None and informer.has_synced else None

    async def get(self, resource: Resource, name: str, namespace: str | None = None) -> Obj:
        """The object (the cache's when it holds it; else a GET, whose errors raise)."""
        cache = self._cache(resource)
        if cache is not None:
            found = cache.indexer.get(f"{namespace}/{name}" if namespace else name)
            if found is not None:
                return found
        return await self.client.get(resource, name, namespace)

    async def get_or_none(self, resource: Resource, name: str,
                          namespace: str | None = None) -> Obj | None:
        """As `get`, with None for an object that does not exist (a 404), as Client's."""
        try:
            return await self.get(resource, name, namespace)
        except StatusError as exc:
            if exc.code == 404:
                return None
            raise

    async def list(self, resource: Resource, namespace: str) -> list[Obj]:
        """The namespace's objects (the cache's when synced; else a LIST)."""
        cache = self._cache(resource)
        if cache is not None:
            return list(cache.indexer.by_index(NAMESPACE_INDEX, namespace))
        return (await self.client.list(resource, namespace))["items"]
