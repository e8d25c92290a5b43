"""Fit predicates: can this pod run on this node? Pure functions, registered by name.

Kubernetes piece: plugin/pkg/scheduler/algorithm/predicates/predicates.go (v1.0 PodFitsPorts,
PodFitsResources, NoDiskConflict, MatchNodeSelector, HostName; later upstream node affinity,
taints and tolerations, the node pressure and condition checks, GeneralPredicates) and the
names defaults.go registers them under, which a scheduler Policy file refers to.

Each predicate takes the pod's `PodMeta` (computed once per scheduling attempt) and the
`NodeTable` (every schedulable node as columns) and returns its failures: a list of
(reason, rows failing for it). The reasons are the strings `FailedScheduling` events count
("0/3 nodes are available: 3 Insufficient cpu."). A predicate reads like its definition —
an array comparison over all nodes at once — and never lists pods or parses quantities.
`fit_one` answers for a single node (the kubelet's admission check, tests).
The two predicates that take Policy arguments are factories in `predicates_service`.
"""

from __future__ import annotations

import numpy as np

from ..nodeinfo import NodeInfo
from ..nodetable import NodeTable, build
from .predicates_affinity import MATCH_INTER_POD_AFFINITY
from .predicates_errors import (
    ERR_DISK_CONFLICT,
    ERR_INSUFFICIENT_CPU,
    ERR_INSUFFICIENT_MEMORY,
    ERR_NODE_NOT_FOUND,
    ERR_NODE_SELECTOR_NOT_MATCH,
    ERR_NODE_UNDER_DISK_PRESSURE,
    ERR_NODE_UNDER_MEMORY_PRESSURE,
    ERR_NODE_UNSCHEDULABLE,
    ERR_POD_NOT_FITS_HOST_PORTS,
    ERR_POD_NOT_MATCH_HOST_NAME,
    ERR_TAINTS_TOLERATIONS_NOT_MATCH,
    ERR_TOO_MANY_PODS,
)
from .predicates_meta import (
    CONDITION_REASONS,
    Failure,
    FitResult,
    PodMeta,
    Predicate,
    tolerates,
)
from .predicates_service import (
    NodeLister,
    PodLister,
    ServiceLister,
    check_node_label_presence,
    check_service_affinity,
)
from .predicates_volumes import any_disk_conflict

__all__ = [
    "GENERAL_PREDICATES", "PREDICATES", "PREDICATE_FACTORIES", "Failure", "FitResult",
    "NodeLister", "PodLister", "PodMeta", "Predicate", "ServiceLister",
    "check_node_label_presence", "check_service_affinity", "fit_one",
]


def fit_one(predicate: Predicate, meta: PodMeta, info: NodeInfo) -> FitResult:
    """One predicate on one node: (fits, reasons). A NodeInfo without a node object is
    upstream's "node not found"."""
    if info.node is None:
        return False, [ERR_NODE_NOT_FOUND]
    reasons = [reason for reason, rows in predicate(meta, build([info])) if rows[0]]
    return not reasons, reasons


def pod_fits_host_ports(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
    """PodFitsHostPorts (v1.0 PodFitsPorts): no host port of the pod is taken on the node."""
    if not meta.host_ports:
        return []
    taken = nodes.everywhere(False)
    for port in meta.host_ports:
        taken[nodes.rows_using_port(port)] = True
    return [(ERR_POD_NOT_FITS_HOST_PORTS, taken)]


def pod_fits_resources(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
    """PodFitsResources: room for one more pod, and the pod's cpu and memory requests fit in
    allocatable minus what the node's pods already request. A pod requesting nothing only
    needs the pod slot. Reports every shortage, as upstream does."""
    failures = [(ERR_TOO_MANY_PODS, nodes.pod_count + 1 > nodes.max_pods)]
    if not meta.zero_request:
        failures.append((ERR_INSUFFICIENT_CPU,
                         nodes.alloc_cpu < meta.milli_cpu + nodes.requested_cpu))
        failures.append((ERR_INSUFFICIENT_MEMORY,
                         nodes.alloc_memory < meta.memory + nodes.requested_memory))
    return failures


def no_disk_conflict(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
    """NoDiskConflict: no GCE PD / EBS / RBD / iSCSI volume of the pod is mounted by a pod on
    the node in a conflicting way (see predicates_volumes for the per-type rules). Only nodes
    running a pod with such a volume can conflict, so only those are looked at."""
    if not meta.disks:
        return []
    conflict = nodes.everywhere(False)
    for row in np.flatnonzero(nodes.disk_pods).tolist():
        conflict[row] = any_disk_conflict(meta.disks, nodes.infos[row].pods.values())
    return [(ERR_DISK_CONFLICT, conflict)]


def _matches_node_labels(meta: PodMeta, nodes: NodeTable) -> np.ndarray:
    """Upstream podMatchesNodeLabels: nodeSelector AND one of the required node-affinity
    terms (terms ORed, expressions ANDed)."""
    rows = nodes.everywhere()
    for key, value in meta.node_selector:
        rows &= nodes.label_equals(key, value)
    if meta.node_affinity is not None:
        any_term = nodes.everywhere(False)
        for term in meta.node_affinity:
            any_term |= term(nodes)
        rows &= any_term
    return rows


#: the match itself, public for the NodeAffinity and PodTopologySpread plugins
matches_node_labels = _matches_node_labels


def match_node_selector(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
    """MatchNodeSelector (PodSelectorMatches): spec.nodeSelector is a subset of the node's
    labels and one of the required nodeSelectorTerms matches."""
    if not meta.node_selector and meta.node_affinity is None:
        return []
    return [(ERR_NODE_SELECTOR_NOT_MATCH, ~_matches_node_labels(meta, nodes))]


def host_name(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
    """HostName (PodFitsHost): a pod that names its node (spec.nodeName) fits only there."""
    if not meta.node_name:
        return []
    return [(ERR_POD_NOT_MATCH_HOST_NAME,
             nodes.name_id != nodes.strings.lookup(meta.node_name))]


def pod_tolerates_node_taints(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
    """PodToleratesNodeTaints: every NoSchedule and NoExecute taint of the node is tolerated.
    PreferNoSchedule taints are left to the TaintToleration priority."""
    tolerations = meta.tolerations

    def intolerable(taints: tuple) -> bool:
        return any(not any(tolerates(t, taint) for t in tolerations) for taint in taints)

    return [(ERR_TAINTS_TOLERATIONS_NOT_MATCH,
             nodes.per_value(nodes.taint_set, nodes.taint_sets.values, intolerable))]


def check_node_memory_pressure(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
    """CheckNodeMemoryPressure: a node reporting MemoryPressure=True takes no BestEffort pod
    (those are the first the kubelet would evict); pods with requests still fit."""
    if not meta.best_effort:
        return []
    return [(ERR_NODE_UNDER_MEMORY_PRESSURE, nodes.memory_pressure)]


def check_node_disk_pressure(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
    """CheckNodeDiskPressure: a node reporting DiskPressure=True takes no pod."""
    return [(ERR_NODE_UNDER_DISK_PRESSURE, nodes.disk_pressure)]


def check_node_condition(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
    """CheckNodeCondition: Ready must be True, OutOfDisk and NetworkUnavailable False (a
    condition the node does not report is not held against it, as upstream)."""
    held = {r for reasons in nodes.condition_sets.values for r in reasons}
    return [(reason, nodes.per_value(nodes.conditions, nodes.condition_sets.values,
                                     lambda reasons, reason=reason: reason in reasons))
            for reason in CONDITION_REASONS if reason in held]


def check_node_unschedulable(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
    """CheckNodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that
    tolerate the node.kubernetes.io/unschedulable:NoSchedule taint."""
    if meta.tolerates_unschedulable:
        return []
    return [(ERR_NODE_UNSCHEDULABLE, nodes.unschedulable)]


def general_predicates(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
    """GeneralPredicates: resources, host name, host ports and node selector, all evaluated so
    every reason is reported (the kubelet re-runs this set on admission upstream)."""
    return [failure
            for predicate in (pod_fits_resources, host_name, pod_fits_host_ports,
                              match_node_selector)
            for failure in predicate(meta, nodes)]
GENERAL_PREDICATES: Predicate = general_predicates

#: every argument-free predicate under its upstream registration name (aliases included)
PREDICATES: dict[str, Predicate] = {
    "PodFitsHostPorts": pod_fits_host_ports,
    "PodFitsPorts": pod_fits_host_ports,  # the v1.0 name, still accepted in Policy files
    "PodFitsResources": pod_fits_resources,
    "NoDiskConflict": no_disk_conflict,
    "MatchNodeSelector": match_node_selector,
    "HostName": host_name,
    "PodToleratesNodeTaints": pod_tolerates_node_taints,
    "CheckNodeMemoryPressure": check_node_memory_pressure,
    "CheckNodeDiskPressure": check_node_disk_pressure,
    "CheckNodeCondition": check_node_condition,
    "CheckNodeUnschedulable": check_node_unschedulable,
    "GeneralPredicates": general_predicates,
    # with the default --failure-domains; factory.py builds it for the configured ones
    "MatchInterPodAffinity": MATCH_INTER_POD_AFFINITY,
}

#: the predicates a Policy configures with arguments, by upstream name
PREDICATE_FACTORIES = {
    "CheckNodeLabelPresence": check_node_label_presence,
    "CheckServiceAffinity": check_service_affinity,
}
