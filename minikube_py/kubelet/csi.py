"""The CSINode a kubelet publishes for the simulated CSI driver it runs.

Kubernetes piece: pkg/volume/csi/nodeinfomanager (InstallCSIDriver, called when a CSI node
plugin registers with the kubelet's plugin manager): the CSINode named after the node, owned by
the Node (so the garbage collector removes it with the node), listing each driver with the
node's ID for it, the topology keys it reports and how many volumes it can attach
(`allocatable.count`, from NodeGetInfo's max_volumes_per_node).

Every simulated node runs the one simulated driver (api/storage.HOSTPATH_DRIVER) and publishes
its CSINode once, after it registered: one create per node, nothing on heartbeats, so 5000
nodes cost 5000 writes at start and none after. The pool makes them with one writer of their
own (pool._csi_worker), off the registration path, so nodes become Ready as fast as before.
"""

from __future__ import annotations

from typing import Any

from ..api.storage import HOSTPATH_DRIVER, HOSTPATH_TOPOLOGY_KEY

Obj = dict[str, Any]

#: the simulated driver's max_volumes_per_node
MAX_VOLUMES_PER_NODE = 256


def csi_node_object(node: Obj) -> Obj:
    """The CSINode for `node` (a Node as the API server returned it: its uid is the owner's)."""
    md = node.get("metadata") or {}
    name = md.get("name", "")
    return {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
        "metadata": {"name": name, "ownerReferences": [{
            "apiVersion": "v1", "kind": "Node", "name": name, "uid": md.get("uid", "")}]},
        "spec": {"drivers": [{"name": HOSTPATH_DRIVER, "nodeID": name,
                              "topologyKeys": [HOSTPATH_TOPOLOGY_KEY],
                              "allocatable": {"count": MAX_VOLUMES_PER_NODE}}]},
    }
