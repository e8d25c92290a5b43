"""The two fit predicates a Policy file configures with arguments: label presence and
service affinity.

Kubernetes piece: plugin/pkg/scheduler/algorithm/predicates/predicates.go NodeLabelChecker
(Policy argument `labelsPresence`) and ServiceAffinity (Policy argument `serviceAffinity`),
v1.0–v1.5 semantics. Both are factories: the Policy names the labels, the factory returns an
ordinary `Predicate` over the NodeTable's label columns.

ServiceAffinity keeps the pods of one service on nodes that agree on the given labels (e.g.
all in one `region`). The wanted label values come from the pod's own nodeSelector, and for
labels it leaves open, from the node running some already scheduled pod of the pod's first
service in its namespace. That lookup depends only on the pod, so it is done once per
`PodMeta` (one scheduling attempt), not once per node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from ...api.labels import LabelSelector, selector_from_set
from ..nodetable import ABSENT, NodeTable
from .predicates_errors import ERR_NODE_LABEL_PRESENCE_VIOLATED, ERR_SERVICE_AFFINITY_VIOLATED
from .predicates_meta import Failure, PodMeta, Predicate

Obj = dict[str, Any]
_NO_LABELS: Mapping[str, str] = {}


class ServiceLister(Protocol):
    def services_for_pod(self, pod: Obj) -> list[Obj]:
        """Services in the pod's namespace whose selector matches the pod (GetPodServices)."""
        ...


class PodLister(Protocol):
    def pods(self, namespace: str, selector: LabelSelector) -> list[Obj]:
        """Pods known to the scheduler in `namespace` whose labels match `selector`."""
        ...


class NodeLister(Protocol):
    def get(self, name: str) -> Obj | None:
        """The Node object called `name`, or None."""
        ...


def check_node_label_presence(labels: Iterable[str], presence: bool) -> Predicate:
    """Upstream CheckNodeLabelPresence: with presence=True the node must carry every label
    (any value); with presence=False it must carry none of them (e.g. `retiring`)."""
    keys = tuple(labels)

    def node_label_presence(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
        violated = nodes.everywhere(False)
        for key in keys:
            violated |= (nodes.label(key) != ABSENT) != presence
        return [(ERR_NODE_LABEL_PRESENCE_VIOLATED, violated)]

    return node_label_presence


def check_service_affinity(labels: Iterable[str], services_lister: ServiceLister,
                           pods_lister: PodLister, node_lister: NodeLister) -> Predicate:
    """Upstream CheckServiceAffinity: the node must carry the label values the pod's service
    already lives on (or the pod's nodeSelector names); no constraint when neither says."""
    keys = tuple(labels)

    def service_affinity(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
        violated = nodes.everywhere(False)
        for key, value in _wanted_labels(keys, meta, services_lister, pods_lister, node_lister):
            violated |= ~nodes.label_equals(key, value)
        return [(ERR_SERVICE_AFFINITY_VIOLATED, violated)]

    return service_affinity


def _wanted_labels(keys: tuple[str, ...], meta: PodMeta, services: ServiceLister,
                   pods: PodLister, nodes: NodeLister) -> tuple[tuple[str, str], ...]:
    """The affinity labels' values: the pod's nodeSelector first, then the labels of the node
    hosting the first scheduled pod of the pod's first service (same namespace)."""
    selector = dict(meta.node_selector)
    wanted = {key: selector[key] for key in keys if key in selector}
    if len(wanted) < len(keys):
        node_labels = _service_node_labels(meta, services, pods, nodes)
        for key in keys:
            if key not in wanted and key in node_labels:
                wanted[key] = node_labels[key]
    return tuple(wanted.items())


def _service_node_labels(meta: PodMeta, services: ServiceLister, pods: PodLister,
                         nodes: NodeLister) -> Mapping[str, str]:
    """Labels of a node already running a pod of the pod's first service ({} if none).
    Upstream fails the whole attempt when that node is not found; skipping to the next pod
    keeps one deleted node from blocking the service."""
    matching = services.services_for_pod(meta.pod)
    if not matching:
        return _NO_LABELS
    service_selector = selector_from_set((matching[0].get("spec") or {}).get("selector"))
    for pod in pods.pods(meta.namespace, service_selector):
        node_name = (pod.get("spec") or {}).get("nodeName")
        node = nodes.get(node_name) if node_name else None
        if node is not None:
            return (node.get("metadata") or {}).get("labels") or _NO_LABELS
    return _NO_LABELS
