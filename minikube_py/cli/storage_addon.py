"""The storage pieces `minikube-py start` installs, as minikube's addons do: the simulated CSI
driver's CSIDriver object and RBAC, and (unless --default-storage-class=false) the default
StorageClass `standard`.

Kubernetes pieces: minikube's `storage-provisioner` and `default-storageclass` addons and the
RBAC manifests kubernetes-csi ships with external-provisioner and external-attacher
(deploy/kubernetes/rbac.yaml): the driver's sidecars are not kube-controller-manager
controllers and have no bootstrap role, so the cluster installer grants them one. Here both
sidecars (controllers/csi_provisioner.py, csi_attacher.py) run as
`system:serviceaccount:kube-system:csi-hostpath-driver`, bound to the ClusterRole below.

Objects are created when missing and never overwritten: a user who deleted the default
annotation or the class keeps that choice across restarts only if they delete the class (the
addon re-creates what is absent, as minikube's addon manager does in EnsureExists mode).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import structlog

from ..api.errors import StatusError
from ..api.storage import hostpath_csi_driver, hostpath_default_class
from ..client.resources import CSI_DRIVERS, SERVICEACCOUNTS, STORAGE_CLASSES, Resource

if TYPE_CHECKING:
    from ..client import Client

log = structlog.get_logger(component="minikube-py")

Obj = dict[str, Any]
DRIVER_ACCOUNT = "csi-hostpath-driver"
DRIVER_ROLE = "minikube-py:csi-hostpath-driver"
CLUSTER_ROLES = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", False, "ClusterRole")
CLUSTER_ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", False,
                                 "ClusterRoleBinding")


def _rule(group: str, resources: list[str], verbs: list[str]) -> Obj:
    return {"apiGroups": [group], "resources": resources, "verbs": verbs}


#: external-provisioner-runner + external-attacher-runner, as kubernetes-csi ships them
DRIVER_RULES = [
    _rule("", ["persistentvolumes"], ["get", "list", "watch", "create", "delete", "patch"]),
    _rule("", ["persistentvolumeclaims"], ["get", "list", "watch", "update"]),
    _rule("storage.k8s.io", ["storageclasses"], ["get", "list", "watch"]),
    _rule("", ["events"], ["list", "watch", "create", "update", "patch"]),
    _rule("storage.k8s.io", ["csinodes"], ["get", "list", "watch"]),
    _rule("", ["nodes"], ["get", "list", "watch"]),
    _rule("storage.k8s.io", ["volumeattachments"], ["get", "list", "watch", "patch"]),
    _rule("storage.k8s.io", ["volumeattachments/status"], ["patch", "update"]),
]


def driver_rbac() -> list[tuple[Resource, Obj]]:
    labels = {"addonmanager.kubernetes.io/mode": "Reconcile"}
    return [
        (SERVICEACCOUNTS, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {
            "name": DRIVER_ACCOUNT, "namespace": "kube-system", "labels": labels}}),
        (CLUSTER_ROLES, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                         "metadata": {"name": DRIVER_ROLE, "labels": labels},
                         "rules": DRIVER_RULES}),
        (CLUSTER_ROLE_BINDINGS, {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": DRIVER_ROLE, "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": DRIVER_ROLE},
            "subjects": [{"kind": "ServiceAccount", "name": DRIVER_ACCOUNT,
                          "namespace": "kube-system"}]}),
    ]


async def install(client: Client, *, default_class: bool = True) -> list[str]:
    """Create what is missing; returns `resource/name` of what was created."""
    wanted = [*driver_rbac(), (CSI_DRIVERS, hostpath_csi_driver())]
    if default_class:
        wanted.append((STORAGE_CLASSES, hostpath_default_class()))
    created = []
    for resource, obj in wanted:
        md = obj["metadata"]
        try:
            await client.create(resource, obj, md.get("namespace"))
        except StatusError as exc:
            if exc.code != 409:
                raise
            continue
        created.append(f"{resource.plural}/{md['name']}")
    if created:
        log.info("storage addon installed", created=created)
    return created
