"""The Node object a kubelet registers, and the status it posts on every heartbeat.

Kubernetes piece: pkg/kubelet/kubelet_node_status.go (initialNode, registerWithAPIServer,
setNodeStatus with the nodestatus setters: NodeAddress, MachineInfo, VersionInfo,
DaemonEndpoints, MemoryPressure/DiskPressure/PIDPressure/Ready conditions). Pure functions of
the node's config and the time; the pool does the I/O.

Upstream rules kept: the well-known labels (kubernetes.io/hostname, os, arch and their beta.
twins) are always set and win over --node-labels on take-over (updateDefaultLabels); the Ready
condition is last in the list (kubectl and old clients read the last one); a condition's
lastTransitionTime moves only when its status changes, its lastHeartbeatTime on every post.
Capacity is what the config says; allocatable equals capacity (no --system-reserved or
eviction thresholds are simulated).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from .config import KubeletConfig

Obj = dict[str, Any]

OS, ARCH = "linux", "amd64"
RUNTIME_VERSION = "minikube-py://1.0.0"
OS_IMAGE = "minikube-py simulated node"
KERNEL_VERSION = "5.4.0-minikube-py"

#: (type, status when healthy, reason, message) in upstream's order, Ready last
HEALTHY_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory",
     "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)
#: the node events upstream records when a condition becomes healthy (recordNodeStatusEvent)
CONDITION_EVENTS = {"MemoryPressure": "NodeHasSufficientMemory",
                    "DiskPressure": "NodeHasNoDiskPressure",
                    "PIDPressure": "NodeHasSufficientPID", "Ready": "NodeReady"}


def default_labels(name: str) -> dict[str, str]:
    return {"beta.kubernetes.io/arch": ARCH, "beta.kubernetes.io/os": OS,
            "kubernetes.io/arch": ARCH, "kubernetes.io/hostname": name, "kubernetes.io/os": OS}


def node_labels(name: str, config: KubeletConfig) -> dict[str, str]:
    return {**config.labels, **default_labels(name)}


def _id(name: str, salt: str) -> str:
    return hashlib.sha256(f"{salt}:{name}".encode()).hexdigest()[:32]


def node_info(name: str, config: KubeletConfig, boot_id: str) -> Obj:
    """status.nodeInfo (VersionInfo + MachineInfo setters); ids derived from the name so a
    re-registered node reports the same machine, bootID new on every kubelet start."""
    machine = _id(name, "machine")
    return {"machineID": machine, "systemUUID": str(uuid.UUID(_id(name, "uuid"))),
            "bootID": boot_id, "kernelVersion": KERNEL_VERSION, "osImage": OS_IMAGE,
            "containerRuntimeVersion": RUNTIME_VERSION, "kubeletVersion": config.kubelet_version,
            "kubeProxyVersion": config.kubelet_version, "operatingSystem": OS,
            "architecture": ARCH}


def capacity(config: KubeletConfig) -> dict[str, str]:
    return {"cpu": str(config.cpu), "ephemeral-storage": str(config.ephemeral_storage),
            "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": str(config.memory),
            "pods": str(config.pods)}


def conditions(now: str, previous: list[Obj] | None = None) -> list[Obj]:
    """The four healthy conditions, heartbeat `now`; a condition whose status is unchanged
    from `previous` keeps its lastTransitionTime."""
    before = {c.get("type"): c for c in previous or () if isinstance(c, dict)}
    out = []
    for kind, status, reason, message in HEALTHY_CONDITIONS:
        old = before.get(kind)
        transition = old.get("lastTransitionTime") if old and old.get("status") == status else None
        out.append({"type": kind, "status": status, "lastHeartbeatTime": now,
                    "lastTransitionTime": transition or now, "reason": reason,
                    "message": message})
    return out


def transitions(previous: list[Obj] | None) -> list[str]:
    """Node events due when posting healthy conditions over `previous` (NodeReady, ...)."""
    before = {c.get("type"): c.get("status") for c in previous or () if isinstance(c, dict)}
    return [CONDITION_EVENTS[kind] for kind, status, _, _ in HEALTHY_CONDITIONS
            if before.get(kind) != status]


def node_status(name: str, config: KubeletConfig, node_ip: str, port: int, boot_id: str,
                now: str, previous: list[Obj] | None = None) -> Obj:
    cap = capacity(config)
    return {
        "capacity": cap, "allocatable": dict(cap),
        "conditions": conditions(now, previous),
        "addresses": [{"type": "InternalIP", "address": node_ip},
                      {"type": "Hostname", "address": name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        "nodeInfo": node_info(name, config, boot_id),
    }


def node_object(name: str, config: KubeletConfig, *, node_ip: str, port: int, boot_id: str,
                pod_cidr: str | None, now: str) -> Obj:
    """The Node a kubelet POSTs when it registers (initialNode + setNodeStatus)."""
    spec: Obj = {}
    if pod_cidr:
        spec["podCIDR"] = pod_cidr
        spec["podCIDRs"] = [pod_cidr]
    if config.taints:
        spec["taints"] = [dict(t) for t in config.taints]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": node_labels(name, config),
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                         "volumes.kubernetes.io/controller-managed-attach-detach":
                                         "true"}},
            "spec": spec,
            "status": node_status(name, config, node_ip, port, boot_id, now)}


def take_over(existing: Obj, wanted: Obj) -> Obj | None:
    """The update that makes an existing Node ours (tryRegisterWithAPIServer on AlreadyExists:
    updateDefaultLabels, and a podCIDR set if the node has none); None if nothing to change."""
    node = {**existing, "metadata": dict(existing.get("metadata") or {}),
            "spec": dict(existing.get("spec") or {})}
    changed = False
    labels = dict(node["metadata"].get("labels") or {})
    for key, value in wanted["metadata"]["labels"].items():
        if labels.get(key) != value:
            labels[key] = value
            changed = True
    node["metadata"]["labels"] = labels
    if not node["spec"].get("podCIDR") and wanted["spec"].get("podCIDR"):
        node["spec"]["podCIDR"] = wanted["spec"]["podCIDR"]
        node["spec"]["podCIDRs"] = wanted["spec"]["podCIDRs"]
        changed = True
    return node if changed else None


def heartbeat_patch(now: str, previous: list[Obj] | None) -> Obj:
    """The strategic-merge patch of nodes/{name}/status a heartbeat sends (conditions merge
    by type)."""
    return {"status": {"conditions": conditions(now, previous)}}
