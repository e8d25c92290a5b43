"""Validation of every served kind: create, update (with immutability rules), status update.

Kubernetes pieces: pkg/api/validation/validation.go of v1.0 and its successors
(pkg/apis/core/validation, pkg/apis/apps/validation, autoscaling ValidateScale), plus the
`Validate`/`ValidateUpdate` choices each registry strategy makes (which validators run for the
main resource and which for /status). The registry calls these with objects that were already
defaulted (`minikube_py.api.defaults`) and turns a non-empty result into a 422 with
`errors.invalid_object`.

Contract: pure functions of decoded JSON. They never raise, whatever the input: a field of the
wrong JSON type is itself reported as a FieldError (see `typed`). Unknown kinds get the generic
ObjectMeta checks every resource receives upstream.

Modules by topic: `meta` (ObjectMeta), `pod`, `pod_status`, `container`, `volumes`, `scheduling`,
`resources` (names and quantities), `service`, `node`, `namespace`, `workload` (RC, ReplicaSet,
Deployment, Scale), `batch` (Job, CronJob), `config` (Secret, ConfigMap, ServiceAccount), `quota` (LimitRange,
ResourceQuota), `misc` (Event, Endpoints, Binding), `persistentvolumes` (PersistentVolume,
PersistentVolumeClaim), `priorityclass`, `apiservice`, `certificates`
(CertificateSigningRequest), `policy` (PodDisruptionBudget), `discovery` (EndpointSlice),
`storage` (storage.k8s.io/v1); `typed` and `common` are shared helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minikube_py.api import hpa, hpa_v1
from minikube_py.api.errors import FieldError, invalid
from minikube_py.api.validation import (
    apiservice,
    apps,
    batch,
    certificates,
    config,
    discovery,
    flowcontrol,
    misc,
    namespace,
    networking,
    node,
    persistentvolumes,
    pod,
    pod_status,
    policy,
    priorityclass,
    quota,
    rbac,
    runtimeclass,
    service,
    storage,
    workload,
)
from minikube_py.api.validation.common import name_is_dns_subdomain, path_segment_name
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import Errs, type_name

__all__ = ["CLUSTER_SCOPED", "CUSTOM_RESOURCE", "CUSTOM_RESOURCE_CLUSTER", "EVENTS_V1", "HPA_V1", "validate_create", "validate_status_update", "validate_update"]

#: the validation key of events.k8s.io/v1 Events (registry Strategy.validation): they are
#: stored as core/v1 Events but held to the strict rules of their request version
EVENTS_V1 = "events.k8s.io/v1 Event"
#: autoscaling/v1 HPAs are validated as the v2 object they convert to (upstream validates
#: the internal, v2-shaped type), so messages name v2's paths
HPA_V1 = "autoscaling/v1 HorizontalPodAutoscaler"

Create = Callable[[dict[str, Any], Errs], None]
Update = Callable[[dict[str, Any], dict[str, Any], Errs], None]


def _meta_only_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)


def _scale_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    workload.validate_scale(new, errs)


def _binding_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    misc.validate_binding(new, errs)


def _generic_create(obj: dict[str, Any], errs: Errs) -> None:
    """What the generic registry checks for any resource: ObjectMeta with URL-safe names."""
    validate_object_meta(obj, True, path_segment_name, errs)


def _generic_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    _generic_create(new, errs)
    validate_object_meta_update(new, old, errs)


def _cluster_create(obj: dict[str, Any], errs: Errs) -> None:
    """The generic checks for a cluster-scoped resource (CRDs, cluster-scoped custom resources)."""
    validate_object_meta(obj, False, path_segment_name, errs)


def _cluster_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    _cluster_create(new, errs)
    validate_object_meta_update(new, old, errs)


#: validation keys of cluster-scoped resources without rules of their own (registry/crds.py)
CLUSTER_SCOPED = "cluster-scoped"


def _custom_create(obj: dict[str, Any], errs: Errs, namespaced: bool = True) -> None:
    """A custom resource's ObjectMeta (upstream customResourceValidator.Validate:
    ValidateObjectMetaAccessor with NameIsDNSSubdomain, generateName included)."""
    validate_object_meta(obj, namespaced, name_is_dns_subdomain, errs)


def _custom_update(new: dict[str, Any], old: dict[str, Any], errs: Errs,
                   namespaced: bool = True) -> None:
    _custom_create(new, errs, namespaced)
    validate_object_meta_update(new, old, errs)


def _custom_cluster_create(obj: dict[str, Any], errs: Errs) -> None:
    _custom_create(obj, errs, False)


def _custom_cluster_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    _custom_update(new, old, errs, False)


#: validation keys of custom resources (registry/crds.py), namespaced and cluster-scoped
CUSTOM_RESOURCE = "custom-resource"
CUSTOM_RESOURCE_CLUSTER = "cluster-scoped custom-resource"


def _hpa_create(obj: dict[str, Any], errs: Errs) -> None:
    """autoscaling ValidateHorizontalPodAutoscaler (api/hpa.py)."""
    validate_object_meta(obj, True, name_is_dns_subdomain, errs)
    hpa.validate(obj, errs)


def _hpa_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    hpa.validate(new, errs)


_CREATE: dict[str, Create] = {
    CLUSTER_SCOPED: _cluster_create,
    CUSTOM_RESOURCE: _custom_create,
    CUSTOM_RESOURCE_CLUSTER: _custom_cluster_create,
    "Pod": pod.validate_pod_create,
    "PodTemplate": pod.validate_pod_template,
    "Service": service.validate_service,
    "Node": node.validate_node,
    "Namespace": namespace.validate_namespace,
    "ReplicationController": workload.validate_replication_controller,
    "ReplicaSet": workload.validate_replica_set,
    "Deployment": workload.validate_deployment,
    "HorizontalPodAutoscaler": _hpa_create,
    HPA_V1: lambda obj, errs: _hpa_create(hpa_v1.to_v2(obj), errs),
    "Scale": workload.validate_scale,
    "Job": batch.validate_job,
    "CronJob": batch.validate_cron_job,
    "Secret": config.validate_secret,
    "ConfigMap": config.validate_config_map,
    "ServiceAccount": config.validate_service_account,
    "LimitRange": quota.validate_limit_range,
    "ResourceQuota": quota.validate_resource_quota,
    "Event": misc.validate_event,
    EVENTS_V1: misc.validate_event_v1,
    "Endpoints": misc.validate_endpoints,
    "Binding": misc.validate_binding,
    "PersistentVolume": persistentvolumes.validate_persistent_volume,
    "PersistentVolumeClaim": persistentvolumes.validate_persistent_volume_claim,
    "PriorityClass": priorityclass.validate_priority_class,
    "APIService": apiservice.validate_apiservice,
    "Role": rbac.validate_role,
    "ClusterRole": rbac.validate_cluster_role,
    "RoleBinding": rbac.validate_role_binding,
    "ClusterRoleBinding": rbac.validate_cluster_role_binding,
    "CertificateSigningRequest": certificates.validate_csr,
    "DaemonSet": apps.validate_daemon_set,
    "StatefulSet": apps.validate_stateful_set,
    "ControllerRevision": apps.validate_controller_revision,
    "PodDisruptionBudget": policy.validate_pod_disruption_budget,
    "EndpointSlice": discovery.validate_endpoint_slice,
    "StorageClass": storage.validate_storage_class,
    "CSIDriver": storage.validate_csi_driver,
    "CSINode": storage.validate_csi_node,
    "VolumeAttachment": storage.validate_volume_attachment,
    "CSIStorageCapacity": storage.validate_csi_storage_capacity,
}

_UPDATE: dict[str, Update] = {
    CLUSTER_SCOPED: _cluster_update,
    CUSTOM_RESOURCE: _custom_update,
    CUSTOM_RESOURCE_CLUSTER: _custom_cluster_update,
    "Pod": pod.validate_pod_update,
    "PodTemplate": pod.validate_pod_template_update,
    "Service": service.validate_service_update,
    "Node": node.validate_node_update,
    "Namespace": namespace.validate_namespace_update,
    "ReplicationController": workload.validate_replication_controller_update,
    "ReplicaSet": workload.validate_replica_set_update,
    "Deployment": workload.validate_deployment_update,
    "HorizontalPodAutoscaler": _hpa_update,
    HPA_V1: lambda new, old, errs: _hpa_update(hpa_v1.to_v2(new), hpa_v1.to_v2(old), errs),
    "Scale": _scale_update,
    "Job": batch.validate_job_update,
    "CronJob": batch.validate_cron_job_update,
    "Secret": config.validate_secret_update,
    "ConfigMap": config.validate_config_map_update,
    "ServiceAccount": config.validate_service_account_update,
    "LimitRange": quota.validate_limit_range_update,
    "ResourceQuota": quota.validate_resource_quota_update,
    "Event": misc.validate_event_update,
    EVENTS_V1: misc.validate_event_v1_update,
    "Endpoints": misc.validate_endpoints_update,
    "Binding": _binding_update,
    "PersistentVolume": persistentvolumes.validate_persistent_volume_update,
    "PersistentVolumeClaim": persistentvolumes.validate_persistent_volume_claim_update,
    "PriorityClass": priorityclass.validate_priority_class_update,
    "APIService": apiservice.validate_apiservice_update,
    "Role": rbac.validate_role_update,
    "ClusterRole": rbac.validate_cluster_role_update,
    "RoleBinding": rbac.validate_role_binding_update,
    "ClusterRoleBinding": rbac.validate_cluster_role_binding_update,
    "CertificateSigningRequest": certificates.validate_csr_update,
    "DaemonSet": apps.validate_daemon_set_update,
    "StatefulSet": apps.validate_stateful_set_update,
    "ControllerRevision": apps.validate_controller_revision_update,
    "PodDisruptionBudget": policy.validate_pod_disruption_budget_update,
    "EndpointSlice": discovery.validate_endpoint_slice_update,
    "StorageClass": storage.validate_storage_class_update,
    "CSIDriver": storage.validate_csi_driver_update,
    "CSINode": storage.validate_csi_node_update,
    "VolumeAttachment": storage.validate_volume_attachment_update,
    "CSIStorageCapacity": storage.validate_csi_storage_capacity_update,
}

# Status subresources; kinds without one only get the ObjectMeta update rules.
_STATUS_UPDATE: dict[str, Update] = {
    CLUSTER_SCOPED: _cluster_update,
    CUSTOM_RESOURCE: _custom_update,
    CUSTOM_RESOURCE_CLUSTER: _custom_cluster_update,
    "Pod": pod_status.validate_pod_status_update,
    "Service": service.validate_service_status_update,
    "Node": node.validate_node_update,
    "Namespace": namespace.validate_namespace_status_update,
    "ReplicationController": workload.validate_replica_counts_status,
    "ReplicaSet": workload.validate_replica_counts_status,
    "Deployment": workload.validate_deployment_status_update,
    "Job": batch.validate_job_status_update,
    "CronJob": batch.validate_cron_job_status_update,
    "ResourceQuota": quota.validate_resource_quota_status_update,
    "PersistentVolume": persistentvolumes.validate_persistent_volume_status_update,
    "PersistentVolumeClaim": persistentvolumes.validate_persistent_volume_claim_status_update,
    "APIService": apiservice.validate_apiservice_status_update,
    "CertificateSigningRequest": certificates.validate_csr_status_update,
    "DaemonSet": apps.validate_daemon_set_status,
    "StatefulSet": apps.validate_stateful_set_status,
    "PodDisruptionBudget": policy.validate_pod_disruption_budget_status_update,
    "VolumeAttachment": storage.validate_volume_attachment_status_update,
}


# networking.k8s.io, node.k8s.io, flowcontrol.apiserver.k8s.io (issue 19, netnode): each
# module exports its kinds' validators
for _module in (networking, runtimeclass, flowcontrol):
    _CREATE.update(_module.CREATE)
    _UPDATE.update(_module.UPDATE)
    _STATUS_UPDATE.update(getattr(_module, "STATUS_UPDATE", {}))


def _unique(errs: Errs) -> list[FieldError]:
    """Drop repeated errors, as upstream's ErrorList.ToAggregate does when it builds the
    message (several validators legitimately check the same field, e.g. an update re-runs
    the create checks)."""
    if len(errs) < 2:
        return errs
    seen: set[str] = set()
    out = []
    for err in errs:
        text = err.message()
        if text not in seen:
            seen.add(text)
            out.append(err)
    return out


def _not_object(value: Any) -> list[FieldError]:
    return [invalid("", type_name(value), "must be an object")]


def validate_create(kind: str, obj: dict[str, Any]) -> list[FieldError]:
    """Errors that make `obj` unacceptable as a new `kind` object (empty list = valid)."""
    if not isinstance(obj, dict):
        return _not_object(obj)
    errs: Errs = []
    _CREATE.get(kind, _generic_create)(obj, errs)
    return _unique(errs)


def validate_update(kind: str, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """Errors for replacing `old` with `new` through the main resource, including what may
    never change (names, uid, a pod's spec, a Service's clusterIP, a Deployment's selector)."""
    if not isinstance(new, dict):
        return _not_object(new)
    errs: Errs = []
    _UPDATE.get(kind, _generic_update)(new, old if isinstance(old, dict) else {}, errs)
    return _unique(errs)


def validate_status_update(kind: str, new: dict[str, Any],
                           old: dict[str, Any]) -> list[FieldError]:
    """Errors for replacing `old` with `new` through the /status subresource."""
    if not isinstance(new, dict):
        return _not_object(new)
    errs: Errs = []
    _STATUS_UPDATE.get(kind, _meta_only_update)(new, old if isinstance(old, dict) else {}, errs)
    return _unique(errs)
