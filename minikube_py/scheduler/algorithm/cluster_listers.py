"""The Service, Pod and Node listers a Policy's configured predicates read, bound late.

Kubernetes piece: plugin/pkg/scheduler/factory/factory.go (v1.5) — CreateFromConfig hands
`PluginFactoryArgs{PodLister: f.schedulerCache, ServiceLister: f.ServiceLister,
ControllerLister, ReplicaSetLister, NodeLister: f.NodeLister, NodeInfo}` to every predicate
and priority factory, so `serviceAffinity` (CheckServiceAffinity) can look up the pod's
services, the pods already scheduled for them and their nodes.

Why late: a Policy file is read before the scheduler and its informers exist (the command
must fail at start on a bad policy, before it connects anywhere). The predicates hold this
object; the scheduler plugs its informers and cache in when it is built (`bind`), as it does
for the volume listers (volume_listers.py). Until then every lookup answers "nothing", which
is what an empty cluster would answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ...api.labels import LabelSelector

Obj = dict[str, Any]


def _no_services(_pod: Obj) -> list[Obj]:
    return []


def _no_pods() -> Iterable[Obj]:
    return ()


def _no_node(_name: str) -> Obj | None:
    return None


class ClusterListers:
    """ServiceLister + PodLister + NodeLister (predicates_service.py's protocols) over
    sources plugged in later."""

    def __init__(self) -> None:
        self._services_for_pod: Callable[[Obj], list[Obj]] = _no_services
        self._all_pods: Callable[[], Iterable[Obj]] = _no_pods
        self._node: Callable[[str], Obj | None] = _no_node

    def bind(self, *, services_for_pod: Callable[[Obj], list[Obj]],
             all_pods: Callable[[], Iterable[Obj]], node: Callable[[str], Obj | None]) -> None:
        """`all_pods`: every pod the scheduler counts on a node (bound and assumed: upstream's
        PodLister is the scheduler cache)."""
        self._services_for_pod, self._all_pods, self._node = services_for_pod, all_pods, node

    def services_for_pod(self, pod: Obj) -> list[Obj]:
        return self._services_for_pod(pod)

    def pods(self, namespace: str, selector: LabelSelector) -> list[Obj]:
        out = []
        for pod in self._all_pods():
            md = pod.get("metadata") or {}
            if md.get("namespace") == namespace and selector.matches(md.get("labels") or {}):
                out.append(pod)
        return out

    def get(self, name: str) -> Obj | None:
        return self._node(name)
