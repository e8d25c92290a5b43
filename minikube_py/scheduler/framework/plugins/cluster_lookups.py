"""What the plugins read from the cluster besides nodes: volumes, and the objects selecting a pod.

Kubernetes piece: the listers plugin factories take from `framework.Handle` upstream —
`handle.SharedInformerFactory().Core().V1().PersistentVolumes().Lister()` and friends in
volumebinding / volumezone / volumerestrictions / nodevolumelimits, and the Service /
ReplicationController / ReplicaSet / StatefulSet listers that PodTopologySpread's system
defaults read (helper.DefaultSelector). Here they come from the scheduler's shared informer
factory (`handle.informers`); a handle without one gives empty lookups (no volumes, no
selecting objects), which is what a test or a pure-algorithm run wants.

Pure adapters: informers are only asked for their cached objects, never listed from the API.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....api.labels import LabelSelector
from ....client.resources import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    REPLICASETS,
    REPLICATION_CONTROLLERS,
    SERVICES,
    STATEFULSETS,
    STORAGE_CLASSES,
)
from ...algorithm.cluster_listers import ClusterListers
from ...algorithm.priorities_spreading import controller_selector, service_selector
from ...algorithm.volume_listers import VolumeLister, VolumeListers
from ...selecting import SelectingObjects

Obj = dict[str, Any]


def _informers(handle: Any) -> Any:
    return getattr(handle, "informers", None) if handle is not None else None


def volume_lister(handle: Any) -> VolumeLister:
    """PVs, PVCs and StorageClasses from the handle's informers (upstream's listers)."""
    listers = VolumeListers()
    listers.needed = True
    informers = _informers(handle)
    if informers is None:
        return listers
    pvs = informers.informer(PERSISTENT_VOLUMES)
    pvcs = informers.informer(PERSISTENT_VOLUME_CLAIMS)
    classes = informers.informer(STORAGE_CLASSES)
    listers.bind(lambda namespace, name: pvcs.indexer.get(f"{namespace}/{name}"),
                 pvs.indexer.get, classes.indexer.get, pvs.indexer.list)
    return listers


#: (resource, how its selector is read): the objects helper.DefaultSelector merges
_SELECTING = ((SERVICES, service_selector), (REPLICATION_CONTROLLERS, controller_selector),
              (REPLICASETS, controller_selector), (STATEFULSETS, controller_selector))


def selectors_for_pod(handle: Any) -> Callable[[Obj], list[LabelSelector]]:
    """pod -> the selectors of the Services, RCs, ReplicaSets and StatefulSets in its namespace
    that select it (upstream helper.DefaultSelector's inputs)."""
    informers = _informers(handle)
    if informers is None:
        return lambda _pod: []
    sources = [(informers.informer(resource), read) for resource, read in _SELECTING]
    selecting_objects = SelectingObjects()

    def selecting(pod: Obj) -> list[LabelSelector]:
        return [selector for _, selector in selecting_objects.matching(
            pod, [(informer.indexer.list(), read) for informer, read in sources])]

    return selecting


def default_selector(selectors: list[LabelSelector]) -> LabelSelector:
    """upstream helper.DefaultSelector: every requirement of every selecting object, ANDed
    (an empty result means no default spreading)."""
    return LabelSelector(r for s in selectors for r in s.requirements)


def cluster_listers(handle: Any) -> ClusterListers:
    """Services (the handle's informers), scheduled pods and nodes (the handle's snapshot) for
    the v1.x ServiceAffinity predicate and priority the legacy ServiceAffinity plugin wraps
    (upstream 1.22 gave that plugin the same three listers)."""
    listers = ClusterListers()
    if handle is None:
        return listers
    informers = _informers(handle)
    services = informers.informer(SERVICES) if informers is not None else None

    def services_for_pod(pod: Obj) -> list[Obj]:
        if services is None:
            return []
        md = pod.get("metadata") or {}
        out = []
        for svc in services.indexer.list():
            selector = service_selector(svc)
            if ((svc.get("metadata") or {}).get("namespace") == md.get("namespace")
                    and selector is not None and selector.matches(md.get("labels") or {})):
                out.append(svc)
        return out

    def all_pods() -> Any:
        for info in handle.snapshot().infos:
            yield from info.pods.values()

    def node(name: str) -> Obj | None:
        info = handle.node_info(name)
        return None if info is None else info.node

    listers.bind(services_for_pod=services_for_pod, all_pods=all_pods, node=node)
    return listers
