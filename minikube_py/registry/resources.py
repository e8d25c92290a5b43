"""The resources the API server serves, each one a Strategy value.

Kubernetes v1.0 piece: pkg/master/master.go's `m.storage` map (the table of REST storages per
path, "pods", "pods/status", "pods/binding", ...) and the per-resource strategy.go files that
configure pkg/registry/generic. Keys follow v1.0's etcd layout (`/registry/minions/<name>`,
`/registry/services/specs/...`, `/registry/controllers/...`, `/registry/persistentvolumes/<name>`,
`/registry/persistentvolumeclaims/<ns>/<name>`).
"""

from __future__ import annotations

from typing import Any

from ..api import hpa_v1
from ..api.priority import SYSTEM_PRIORITY_CLASSES
from ..api.validation import HPA_V1 as HPA_V1_VALIDATION
from . import legacy, namespaces, pods, services
from .admissionpolicies import STRATEGIES as ADMISSION_POLICIES
from .apiservices import APISERVICES
from .apps import STRATEGIES as APPS_WORKLOADS
from .certificates import CERTIFICATE_SIGNING_REQUESTS
from .coordination import LEASES
from .crds import CRDS
from .endpointslices import ENDPOINT_SLICES
from .events import EVENTS, EVENTS_V1
from .flowcontrol import STRATEGIES as FLOWCONTROL
from .networking import STRATEGIES as NETWORKING
from .poddisruptionbudgets import EVICTION, POD_DISRUPTION_BUDGETS
from .rbac import STRATEGIES as RBAC
from .reviews import RESOURCES as REVIEW_RESOURCES
from .reviews import STRATEGIES as REVIEWS
from .runtimeclasses import RUNTIME_CLASSES
from .storage import STRATEGIES as STORAGE
from .strategy import (
    StoredAs,
    Strategy,
    SubresourceSpec,
    field_getter,
    field_names,
    field_text,
)
from .webhookconfigurations import (
    MUTATING_WEBHOOK_CONFIGURATIONS,
    VALIDATING_WEBHOOK_CONFIGURATIONS,
)

STATUS = SubresourceSpec("status", ("get", "patch", "update"))
#: verbs discovery lists for connect subresources (upstream: exec/attach/portforward are
#: reached by GET (WebSocket) or POST; proxy by every method)
CONNECT_VERBS = ("create", "get")
PROXY_VERBS = ("create", "delete", "get", "patch", "update")
SCALE = SubresourceSpec("scale", ("get", "patch", "update"), kind="Scale", group="autoscaling",
                        version="v1")


def _reset_status(initial: dict[str, Any]):
    """A prepare_create hook: clients cannot create an object with a status (upstream
    PrepareForCreate of RCs, ReplicaSets, Deployments, ResourceQuotas)."""

    async def prepare_create(registry: Any, obj: dict[str, Any]) -> None:
        obj["status"] = dict(initial)

    return prepare_create


_POD_FIELDS = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
               "spec.serviceAccountName", "spec.hostNetwork:bool", "status.phase", "status.podIP",
               "status.nominatedNodeName")

PODS = Strategy(
    group="", version="v1", resource="pods", kind="Pod", namespaced=True, key_root="pods",
    short_names=("po",), categories=("all",),
    subresources=(
        STATUS,
        SubresourceSpec("binding", ("create",), kind="Binding"),
        SubresourceSpec("log", ("get",)),
        # connect subresources, proxied to the pod's kubelet (apiserver/streaming.py, proxy.py)
        SubresourceSpec("exec", CONNECT_VERBS, kind="PodExecOptions"),
        SubresourceSpec("attach", CONNECT_VERBS, kind="PodAttachOptions"),
        SubresourceSpec("portforward", CONNECT_VERBS, kind="PodPortForwardOptions"),
        SubresourceSpec("proxy", PROXY_VERBS, kind="PodProxyOptions"),
        EVICTION,  # policy/v1 Eviction (apiserver/eviction.py)
    ),
    has_status=True,
    field_attrs=field_getter(*_POD_FIELDS), selectable_fields=field_names(*_POD_FIELDS),
    watch_index_field="spec.nodeName",
    prepare_create=pods.prepare_create, graceful_delete=pods.graceful_delete,
    return_deleted_object=True,
)

NODES = Strategy(
    group="", version="v1", resource="nodes", kind="Node", namespaced=False, key_root="minions",
    short_names=("no",), has_status=True, spec_fields=(),
    # proxy: to the node's kubelet API (apiserver/proxy.py), as upstream's NodeProxyOptions
    subresources=(STATUS, SubresourceSpec("proxy", PROXY_VERBS, kind="NodeProxyOptions")),
    field_attrs=field_getter("spec.unschedulable:bool"), selectable_fields=("spec.unschedulable",),
)

NAMESPACES = Strategy(
    group="", version="v1", resource="namespaces", kind="Namespace", namespaced=False,
    key_root="namespaces", short_names=("ns",), spec_fields=(),
    subresources=(STATUS, SubresourceSpec("finalize", ("update",))),
    has_status=True,
    field_attrs=field_getter("status.phase"), selectable_fields=("status.phase",),
    prepare_create=namespaces.prepare_create, delete_override=namespaces.mark_terminating,
    finalized=namespaces.finalized, subresource_updates={"finalize": namespaces.apply_finalize},
    undeletable=namespaces.PROTECTED,
    return_deleted_object=True,
)

SERVICES = Strategy(
    group="", version="v1", resource="services", kind="Service", namespaced=True,
    key_root="services/specs", short_names=("svc",), categories=("all",),
    subresources=(STATUS, SubresourceSpec("proxy", PROXY_VERBS, kind="ServiceProxyOptions")),
    has_status=True, spec_fields=(),
    field_attrs=field_getter("spec.clusterIP", "spec.type"),
    selectable_fields=("spec.clusterIP", "spec.type"),
    prepare_create=services.prepare_create, prepare_update=services.prepare_update,
    release=services.release,
    return_deleted_object=True,
)

ENDPOINTS = Strategy(
    group="", version="v1", resource="endpoints", kind="Endpoints", namespaced=True,
    key_root="services/endpoints", short_names=("ep",), spec_fields=(),
    allow_create_on_update=True, singular="endpoints",
)

REPLICATION_CONTROLLERS = Strategy(
    group="", version="v1", resource="replicationcontrollers", kind="ReplicationController",
    namespaced=True, key_root="controllers", short_names=("rc",), categories=("all",),
    subresources=(STATUS, SCALE), has_status=True,
    field_attrs=field_getter("status.replicas:int"), selectable_fields=("status.replicas",),
    prepare_create=_reset_status({"replicas": 0}),
)

PODTEMPLATES = Strategy(
    group="", version="v1", resource="podtemplates", kind="PodTemplate", namespaced=True,
    key_root="podtemplates", spec_fields=(),
)

SECRETS = Strategy(
    group="", version="v1", resource="secrets", kind="Secret", namespaced=True,
    key_root="secrets", spec_fields=(), field_attrs=field_getter("type"),
    selectable_fields=("type",),
)

CONFIGMAPS = Strategy(
    group="", version="v1", resource="configmaps", kind="ConfigMap", namespaced=True,
    key_root="configmaps", short_names=("cm",), spec_fields=(),
)

SERVICEACCOUNTS = Strategy(
    group="", version="v1", resource="serviceaccounts", kind="ServiceAccount", namespaced=True,
    key_root="serviceaccounts", short_names=("sa",), spec_fields=(),
    # TokenRequest (apiserver/serviceaccount/tokenrequest.py), served when tokens are signed
    subresources=(SubresourceSpec("token", ("create",), kind="TokenRequest",
                                  group="authentication.k8s.io", version="v1"),),
    return_deleted_object=True,
)

LIMITRANGES = Strategy(
    group="", version="v1", resource="limitranges", kind="LimitRange", namespaced=True,
    key_root="limitranges", short_names=("limits",), spec_fields=(), allow_create_on_update=True,
)

RESOURCEQUOTAS = Strategy(
    group="", version="v1", resource="resourcequotas", kind="ResourceQuota", namespaced=True,
    key_root="resourcequotas", short_names=("quota",), subresources=(STATUS,), has_status=True,
    spec_fields=(), prepare_create=_reset_status({}),
)

DEPLOYMENTS = Strategy(
    group="apps", version="v1", resource="deployments", kind="Deployment", namespaced=True,
    key_root="deployments", short_names=("deploy",), categories=("all",),
    subresources=(STATUS, SCALE), has_status=True, prepare_create=_reset_status({}),
    status_metadata=("annotations",),
)

REPLICASETS = Strategy(
    group="apps", version="v1", resource="replicasets", kind="ReplicaSet", namespaced=True,
    key_root="replicasets", short_names=("rs",), categories=("all",),
    subresources=(STATUS, SCALE), has_status=True,
    field_attrs=field_getter("status.replicas:int"), selectable_fields=("status.replicas",),
    prepare_create=_reset_status({"replicas": 0}),
)

# -- batch/v1 (pkg/registry/batch/job, pkg/registry/batch/cronjob) ---------------------------

#: upstream job REST's deleteWarning for a delete that relies on the Orphan default
JOB_DELETE_WARNING = ("child pods are preserved by default when jobs are deleted; set "
                      "propagationPolicy=Background to remove them or set "
                      "propagationPolicy=Orphan to suppress this warning")

def _job_fields(obj: dict[str, Any]) -> dict[str, str]:
    """Upstream JobToSelectableFields: `status.successful` is the succeeded count."""
    attrs = field_getter()(obj)
    succeeded = ((obj.get("status") or {}) if isinstance(obj.get("status"), dict) else {}
                 ).get("succeeded")
    attrs["status.successful"] = field_text(succeeded if isinstance(succeeded, int) else 0)
    return attrs


#: Jobs: status written by the job controller; the selector and template labels are generated
#: at create (api/batch.py generate_selector, run with the defaults once uid and name are set);
#: a delete without a propagation policy orphans the pods, as batch/v1 always has
JOBS = Strategy(
    group="batch", version="v1", resource="jobs", kind="Job", namespaced=True,
    key_root="jobs", categories=("all",), subresources=(STATUS,), has_status=True,
    field_attrs=_job_fields, selectable_fields=("status.successful",),
    prepare_create=_reset_status({}), default_gc_policy="Orphan",
    default_gc_warning=JOB_DELETE_WARNING,
)

CRONJOBS = Strategy(
    group="batch", version="v1", resource="cronjobs", kind="CronJob", namespaced=True,
    key_root="cronjobs", short_names=("cj",), categories=("all",), subresources=(STATUS,),
    has_status=True, prepare_create=_reset_status({}),
)
BATCH = (CRONJOBS, JOBS)


# -- autoscaling (issue 18, metrics branch) ---------------------------------------------------
#: pkg/registry/autoscaling/horizontalpodautoscaler: status written by the HPA controller
HORIZONTAL_POD_AUTOSCALERS = Strategy(
    group="autoscaling", version="v2", resource="horizontalpodautoscalers",
    kind="HorizontalPodAutoscaler", namespaced=True, key_root="horizontalpodautoscalers",
    short_names=("hpa",), categories=("all",), subresources=(STATUS,), has_status=True,
    # v2's desiredReplicas is the one status field without omitempty
    prepare_create=_reset_status({"desiredReplicas": 0}),
)
#: autoscaling/v1: the same stored objects seen through pkg/apis/autoscaling/v1's conversion
HORIZONTAL_POD_AUTOSCALERS_V1 = Strategy(
    group="autoscaling", version="v1", resource="horizontalpodautoscalers",
    kind="HorizontalPodAutoscaler", namespaced=True, key_root="horizontalpodautoscalers",
    short_names=("hpa",), categories=("all",), subresources=(STATUS,), has_status=True,
    prepare_create=_reset_status({"desiredReplicas": 0}), validation=HPA_V1_VALIDATION,
    stored_as=StoredAs(storage=HORIZONTAL_POD_AUTOSCALERS, to_storage=hpa_v1.to_v2,
                       from_storage=hpa_v1.from_v2, field_labels={}),
)


def _name_field(obj: dict[str, Any]) -> dict[str, str]:
    """metadata.name/namespace plus the legacy `name` field of PVs and PVCs (upstream
    PersistentVolume(Claim)ToSelectableFields: "a bug, but we need to support it")."""
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    return {"metadata.name": name, "metadata.namespace": meta.get("namespace", ""), "name": name}


#: pkg/registry/core/persistentvolume: cluster-scoped, `status` written by the claim binder;
#: a new volume starts Pending (the binder makes it Available)
PERSISTENT_VOLUMES = Strategy(
    group="", version="v1", resource="persistentvolumes", kind="PersistentVolume",
    namespaced=False, key_root="persistentvolumes", short_names=("pv",),
    subresources=(STATUS,), has_status=True, spec_fields=(), field_attrs=_name_field,
    selectable_fields=("name",), prepare_create=_reset_status({"phase": "Pending"}),
)

#: pkg/registry/core/persistentvolumeclaim: a new claim is Pending until bound
PERSISTENT_VOLUME_CLAIMS = Strategy(
    group="", version="v1", resource="persistentvolumeclaims", kind="PersistentVolumeClaim",
    namespaced=True, key_root="persistentvolumeclaims", short_names=("pvc",),
    subresources=(STATUS,), has_status=True, spec_fields=(), field_attrs=_name_field,
    selectable_fields=("name",), prepare_create=_reset_status({"phase": "Pending"}),
)

#: pkg/registry/scheduling/priorityclass: cluster-scoped; the system classes are created at
#: startup (priorityclasses.py) and cannot be deleted
PRIORITY_CLASSES = Strategy(
    group="scheduling.k8s.io", version="v1", resource="priorityclasses", kind="PriorityClass",
    namespaced=False, key_root="priorityclasses", short_names=("pc",), spec_fields=(),
    undeletable=frozenset(SYSTEM_PRIORITY_CLASSES),
    undeletable_reason="this is a system priority class and cannot be deleted",
)

#: served but not stored: componentstatuses are probed live; bindings are a pod write
COMPONENT_STATUSES = Strategy(
    group="", version="v1", resource="componentstatuses", kind="ComponentStatus",
    namespaced=False, key_root="", short_names=("cs",), verbs=("get", "list"), spec_fields=(),
)
BINDINGS = Strategy(
    group="", version="v1", resource="bindings", kind="Binding", namespaced=True, key_root="",
    verbs=("create",), spec_fields=(),
)

#: stored resources, in discovery order
STORED: tuple[Strategy, ...] = (
    BINDINGS, COMPONENT_STATUSES, CONFIGMAPS, ENDPOINTS, EVENTS, LIMITRANGES, NAMESPACES, NODES,
    PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, PODTEMPLATES, REPLICATION_CONTROLLERS,
    RESOURCEQUOTAS, SECRETS, SERVICEACCOUNTS, SERVICES, DEPLOYMENTS, REPLICASETS, EVENTS_V1,
    PRIORITY_CLASSES, CRDS, MUTATING_WEBHOOK_CONFIGURATIONS, *ADMISSION_POLICIES,
    VALIDATING_WEBHOOK_CONFIGURATIONS, APISERVICES, *REVIEWS, CERTIFICATE_SIGNING_REQUESTS,
    *RBAC, *BATCH,
    *APPS_WORKLOADS,
    POD_DISRUPTION_BUDGETS,
    HORIZONTAL_POD_AUTOSCALERS, HORIZONTAL_POD_AUTOSCALERS_V1,
    ENDPOINT_SLICES,
    *NETWORKING, RUNTIME_CLASSES, *FLOWCONTROL,  # issue 19 (netnode)
    *STORAGE,
    LEASES,
)
#: versions upstream removed, for older components (registry/legacy.py); served only when
#: --runtime-config enables them
LEGACY: tuple[Strategy, ...] = legacy.strategies(CRONJOBS)
STORED += LEGACY
DISABLED_BY_DEFAULT: frozenset[tuple[str, str, str]] = frozenset(
    (s.group, s.version, s.resource) for s in LEGACY)
VIRTUAL = frozenset({"componentstatuses", "bindings", *REVIEW_RESOURCES})

#: group/version -> strategies served there
GROUP_VERSIONS: dict[tuple[str, str], tuple[Strategy, ...]] = {}
for _s in STORED:
    GROUP_VERSIONS.setdefault((_s.group, _s.version), ())
    GROUP_VERSIONS[(_s.group, _s.version)] += (_s,)


