"""The Lease a kubelet renews for its node in kube-node-lease, and when its node status is due.

Kubernetes piece: k8s.io/component-helpers/apimachinery/lease (the kubelet's node lease
controller: newLease, setNodeOwnerFunc) and pkg/kubelet/kubelet_node_status.go's
tryUpdateNodeStatus as 1.17+ runs it with leases: the Lease is the cheap heartbeat (a ~300
byte object renewed every 0.25 x leaseDurationSeconds = 10 s); the Node's status — several kB,
watched by every scheduler and controller — is written only when it changed or
--node-status-report-frequency (5 min) has passed since the last write.

Pure functions; kubelet.py does the requests.
"""

from __future__ import annotations

from typing import Any

from ..api import meta
from .node_status import HEALTHY_CONDITIONS

Obj = dict[str, Any]

NODE_LEASE_NAMESPACE = "kube-node-lease"
#: upstream kubelet defaults: nodeLeaseDurationSeconds, and the renew interval the kubelet
#: derives from it (NodeLeaseRenewIntervalFraction 0.25)
DEFAULT_LEASE_DURATION_SECONDS = 40
RENEW_INTERVAL_FRACTION = 0.25
#: --node-heartbeat-mode values: upstream 1.17+ (lease) and v1.0's full status posts (status)
LEASE_MODE, STATUS_MODE = "lease", "status"
HEARTBEAT_MODES = (LEASE_MODE, STATUS_MODE)


def owner_reference(node_name: str, node_uid: str) -> Obj:
    """setNodeOwnerFunc: the Lease belongs to its Node, so the garbage collector deletes it
    with the Node."""
    return {"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": node_uid}


def renewed_lease(base: Obj | None, node_name: str, node_uid: str | None, duration: int,
                  now: float) -> Obj:
    """newLease: `base` (the Lease read or written last) with our holder, duration and a
    fresh renewTime; a new Lease when there is no base. The owner reference is added once
    the Node's uid is known and the Lease has none (never replaced)."""
    if base is None:
        lease: Obj = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                      "metadata": {"name": node_name, "namespace": NODE_LEASE_NAMESPACE},
                      "spec": {}}
    else:
        lease = {**base, "metadata": dict(base.get("metadata") or {}),
                 "spec": dict(base.get("spec") or {})}
    lease["spec"].update(holderIdentity=node_name, leaseDurationSeconds=duration,
                         renewTime=meta.rfc3339_micro(now))
    if node_uid and not lease["metadata"].get("ownerReferences"):
        lease["metadata"]["ownerReferences"] = [owner_reference(node_name, node_uid)]
    return lease


def status_differs(node: Obj | None) -> bool:
    """Whether the Node as the API server has it shows kubelet conditions other than the
    healthy ones we would post (the node controller marked it Unknown, someone patched it):
    upstream's tryUpdateNodeStatus then writes at once instead of waiting for the report
    frequency. Heartbeat and transition times do not count."""
    if node is None:
        return False
    present = {c.get("type"): (c.get("status"), c.get("reason"))
               for c in (node.get("status") or {}).get("conditions") or ()
               if isinstance(c, dict)}
    return any(present.get(kind) != (status, reason)
               for kind, status, reason, _ in HEALTHY_CONDITIONS)
