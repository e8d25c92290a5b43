"""The pod /status subresource: what the kubelet (and nobody else) may report about a pod.

Kubernetes piece: pkg/apis/core/validation ValidatePodStatusUpdate (validatePodConditions,
ValidateContainerStateTransition, validatePodIPs, validateHostIPs). The registry copies the spec
from the stored pod for status writes, so only status rules and the pod's identity are checked:
valid IPs, one per family, an immutable QoS class, no node change outside /binding, and no
container coming back from the dead when the restart policy forbids it.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.errors import duplicate, forbidden, invalid
from minikube_py.api.validation.common import (
    IMMUTABLE,
    parse_ip,
    sub,
    validate_ip,
    validate_name,
    validate_qualified_name,
)
from minikube_py.api.validation.meta import validate_object_meta_update
from minikube_py.api.validation.typed import (
    Errs,
    as_list,
    get_dict,
    get_str,
    index,
    iter_dicts,
)


def validate_pod_status_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """ValidatePodStatusUpdate: conditions, IPs, immutable QoS class and node, and no container
    coming back from the dead when the restart policy forbids it."""
    validate_object_meta_update(new, old, errs)
    status = get_dict(new, "status", "", errs) or {}
    for i, condition, c_path in iter_dicts(status, "conditions", "status", errs):
        kind = get_str(condition, "type", c_path, errs)
        if kind not in ("PodScheduled", "Ready", "Initialized"):
            validate_qualified_name(kind, f"metadata.conditions[{i}].Type", errs)
    if sub(new, "spec", "nodeName") != sub(old, "spec", "nodeName"):
        errs.append(forbidden("status.nodeName", "may not be changed directly"))
    nominated = get_str(status, "nominatedNodeName", "status", errs)
    if nominated and nominated != sub(old, "status", "nominatedNodeName"):
        validate_name(nominated, "status.nominatedNodeName", errs)
    old_qos = sub(old, "status", "qosClass")
    if old_qos and status.get("qosClass") != old_qos:
        errs.append(invalid("status.qosClass", status.get("qosClass"), IMMUTABLE))
    restart = sub(old, "spec", "restartPolicy")
    for name in ("containerStatuses", "initContainerStatuses"):
        _state_transitions(status, sub(old, "status", name), name, restart, errs)
    _validate_ips(status, "podIPs", errs)
    _validate_ips(status, "hostIPs", errs)
    host_ips = status.get("hostIPs")
    if isinstance(host_ips, list) and host_ips and isinstance(host_ips[0], dict):
        if host_ips[0].get("ip") != status.get("hostIP"):
            errs.append(invalid("status.hostIPs[0].ip", host_ips[0].get("ip"),
                                "must be equal to `hostIP`"))


def _state_transitions(status: dict[str, Any], old_statuses: Any, name: str, restart: Any,
                       errs: Errs) -> None:
    if restart == "Always" or not isinstance(old_statuses, list):
        return
    new_statuses = [s for s in as_list(status.get(name)) if isinstance(s, dict)]
    for i, old in enumerate(old_statuses):
        terminated = sub(old, "state", "terminated")
        if not isinstance(terminated, dict):
            continue
        if terminated.get("exitCode") not in (0, None) and restart == "OnFailure":
            continue
        for new in new_statuses:
            if new.get("name") == old.get("name") and sub(new, "state", "terminated") is None:
                errs.append(forbidden(f"status.{name}[{i}].state",
                                      "may not be transitioned to non-terminated state"))


def _validate_ips(status: dict[str, Any], name: str, errs: Errs) -> None:
    path = f"status.{name}"
    ips = []
    for _, entry, entry_path in iter_dicts(status, name, "status", errs):
        ip = get_str(entry, "ip", entry_path, errs)
        validate_ip(ip, entry_path, errs)
        ips.append((ip, entry))
    if len(ips) > 1:
        families = {parse_ip(ip).version for ip, _ in ips if parse_ip(ip) is not None}
        if len(ips) > 2 or len(families) != 2:
            errs.append(invalid(path, [e for _, e in ips],
                                "may specify no more than one IP for each IP family"))
        seen: set[str] = set()
        for i, (ip, entry) in enumerate(ips):
            if ip in seen:
                errs.append(duplicate(index(path, i), entry))
            seen.add(ip)
