"""Pod admission on the node: the scheduler's GeneralPredicates, run again by the kubelet.

Kubernetes piece: pkg/kubelet/lifecycle/predicate.go (predicateAdmitHandler.Admit, v1.4+;
v1.0's kubelet.canAdmitPod checked resources and host ports the same way). A pod bound to a
node it does not fit — bound directly with spec.nodeName, or by a scheduler whose view was
stale — is rejected: phase Failed, and only the *first* failing reason is reported, as upstream:

- a resource shortage becomes reason `OutOf<resource>` (`OutOfcpu`, `OutOfmemory`, `OutOfpods`)
  with the InsufficientResourceError message
  `Node didn't have enough resource: cpu, requested: 600, used: 3500, capacity: 4000`;
- any other predicate becomes its plugin name (`NodeAffinity`, `NodeName`, `NodePorts`) with
  the message `Predicate NodePorts failed`.

The node's admitted, still-running pods are the NodeInfo the predicate sees.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..scheduler.algorithm.predicates import GENERAL_PREDICATES, fit_one
from ..scheduler.algorithm.predicates_errors import (
    ERR_INSUFFICIENT_CPU,
    ERR_INSUFFICIENT_MEMORY,
    ERR_NODE_SELECTOR_NOT_MATCH,
    ERR_POD_NOT_FITS_HOST_PORTS,
    ERR_POD_NOT_MATCH_HOST_NAME,
    ERR_TOO_MANY_PODS,
)
from ..scheduler.algorithm.predicates_meta import PodMeta
from ..scheduler.nodeinfo import NodeInfo, pod_requests

Obj = dict[str, Any]

#: insufficient-resource reasons -> upstream's resource name, in noderesources.Fits' order
_RESOURCES = ((ERR_TOO_MANY_PODS, "pods"), (ERR_INSUFFICIENT_CPU, "cpu"),
              (ERR_INSUFFICIENT_MEMORY, "memory"))
#: other GeneralPredicates reasons -> upstream plugin name, in generalFilter's order
_PREDICATES = ((ERR_NODE_SELECTOR_NOT_MATCH, "NodeAffinity"),
               (ERR_POD_NOT_MATCH_HOST_NAME, "NodeName"),
               (ERR_POD_NOT_FITS_HOST_PORTS, "NodePorts"))


class Rejection(NamedTuple):
    reason: str
    message: str  # the event's message; the pod's status.message is "Pod " + this


def _insufficient(resource: str, pod: Obj, info: NodeInfo) -> str:
    alloc, max_pods = info.allocatable()
    if resource == "pods":
        requested, used, capacity = 1, len(info.pods), max_pods
    else:
        request = pod_requests(pod)
        requested = request.milli_cpu if resource == "cpu" else request.memory
        used = info.requested.milli_cpu if resource == "cpu" else info.requested.memory
        capacity = alloc.milli_cpu if resource == "cpu" else alloc.memory
    return (f"Node didn't have enough resource: {resource}, requested: {requested}, "
            f"used: {used}, capacity: {capacity}")


def admit(pod: Obj, info: NodeInfo) -> Rejection | None:
    """None if `pod` fits on `info` (the node and its admitted active pods), else why not."""
    fits, reasons = fit_one(GENERAL_PREDICATES, PodMeta.of(pod), info)
    if fits:
        return None
    failed = set(reasons)
    for reason, resource in _RESOURCES:
        if reason in failed:
            return Rejection(f"OutOf{resource}", _insufficient(resource, pod, info))
    for reason, plugin in _PREDICATES:
        if reason in failed:
            return Rejection(plugin, f"Predicate {plugin} failed")
    return Rejection("UnexpectedPredicateFailureType",
                     f"GeneralPredicates failed due to {reasons}, which is unexpected.")
