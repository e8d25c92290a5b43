"""The failure reasons fit predicates report, in upstream's words.

Kubernetes piece: plugin/pkg/scheduler/algorithm/predicates/error.go (the PredicateFailureError
reasons as rewritten for v1.8+ `FailedScheduling` events, "0/3 nodes are available: 1
Insufficient cpu, 2 node(s) didn't match node selector."). Why a module of its own: the
predicates produce these strings and the scheduler's FitError counts them per reason, so both
sides import one spelling.
"""

from __future__ import annotations

ERR_INSUFFICIENT_CPU = "Insufficient cpu"
ERR_INSUFFICIENT_MEMORY = "Insufficient memory"
ERR_TOO_MANY_PODS = "Too many pods"
ERR_NODE_SELECTOR_NOT_MATCH = "node(s) didn't match node selector"
ERR_POD_NOT_FITS_HOST_PORTS = "node(s) didn't have free ports for the requested pod ports"
ERR_TAINTS_TOLERATIONS_NOT_MATCH = "node(s) had taints that the pod didn't tolerate"
ERR_DISK_CONFLICT = "node(s) had no available disk"
ERR_NODE_NOT_READY = "node(s) were not ready"
ERR_NODE_OUT_OF_DISK = "node(s) were out of disk space"
ERR_NODE_NETWORK_UNAVAILABLE = "node(s) had unavailable network"
ERR_NODE_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_NODE_UNDER_DISK_PRESSURE = "node(s) had disk pressure"
ERR_NODE_UNDER_MEMORY_PRESSURE = "node(s) had memory pressure"
ERR_POD_NOT_MATCH_HOST_NAME = "node(s) didn't match the requested hostname"
ERR_NODE_LABEL_PRESENCE_VIOLATED = "node(s) didn't have the requested labels"
ERR_SERVICE_AFFINITY_VIOLATED = "node(s) didn't match service affinity"
#: the NodeInfo has no node object (upstream returns the error "node not found")
ERR_NODE_NOT_FOUND = "node not found"
