"""Server-side Table columns and cells for `kubectl get` of every built-in kind we serve.

Kubernetes piece: pkg/printers/internalversion/printers.go (AddHandlers' column sets and the
printPod/printNode/printService/... cell functions), plus the apiserver's default table
convertor (`Name`, `Created At`) for kinds without a printer. kubectl has had no client-side
printers for built-in types since before 1.20: READY, STATUS, RESTARTS and the rest appear
only when the server answers `Accept: application/json;as=Table` with these cells (see
docs: kubectl-protocol §6). The server always builds the wide row, as upstream's
printerstorage does (`GenerateOptions{Wide: true}`), and kubectl hides priority-1 columns
unless `-o wide`; so `row_cells` returns one cell per column, in column order.

Why so defensive: cells are computed from whatever JSON is stored, on every list and watch
event; a missing or oddly typed field must give a blank or `<none>`, never a 500.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from minikube_py.api import errors
from minikube_py.api.batch import job_status_text
from minikube_py.api.duration import human_duration, parse_timestamp
from minikube_py.api.labels import selector_from_label_selector
from minikube_py.api.meta import rfc3339
from minikube_py.api.networking import ingress_address, ingress_hosts, ingress_ports
from minikube_py.api.table_rows import (
    Obj,
    endpoints_row,
    event_row,
    format_labels,
    node_row,
    pod_row,
    service_row,
)
from minikube_py.api.table_rows import as_dict as _d
from minikube_py.api.table_rows import as_int as _n
from minikube_py.api.table_rows import as_list as _l
from minikube_py.api.table_rows import as_str as _s
from minikube_py.api.table_rows import object_age as _age
from minikube_py.api.table_rows import object_name as _name
from minikube_py.api.volume_helpers import access_modes_text, storage_class_of

Row = Callable[[Obj, float], list]
_GO_ZERO_TIME_TEXT = "0001-01-01T00:00:00Z"


def _quantity(value: Any) -> str:
    """A resource.Quantity as printed (stored canonical strings; a bare number is allowed)."""
    if isinstance(value, str):
        return value or "0"
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:g}"
    return str(_n(value))


def _selector_string(selector: Any) -> str | None:
    """metav1.LabelSelectorAsSelector(s).String(); None when the selector is malformed."""
    try:
        return str(selector_from_label_selector(selector))
    except (errors.StatusError, TypeError, ValueError):
        return None


def format_label_selector(selector: Any) -> str:
    """Upstream metav1.FormatLabelSelector: `<none>` for empty, `<error>` for malformed."""
    text = _selector_string(selector)
    if text is None:
        return "<error>"
    return text or "<none>"


def _containers_cells(pod_spec: Obj) -> list[str]:
    """Upstream layoutContainerCells: names and images, comma-joined."""
    containers = [_d(c) for c in _l(pod_spec.get("containers"))]
    return [
        ",".join(_s(c.get("name")) for c in containers),
        ",".join(_s(c.get("image")) for c in containers),
    ]


# ---------------------------------------------------------------------------------------------
# Columns


_NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_AGE_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_CONTAINERS_DOC = "Names of each container in the template."
_IMAGES_DOC = "Images referenced by each container in the template."


def _col(name: str, description: str, type_: str = "string", priority: int = 0,
         format_: str = "") -> dict[str, Any]:
    return {"name": name, "type": type_, "format": format_, "description": description,
            "priority": priority}


def _name_col(priority: int = 0) -> dict[str, Any]:
    return _col("Name", _NAME_DOC, priority=priority, format_="name")


def _age_col() -> dict[str, Any]:
    return _col("Age", _AGE_DOC)


def _template_cols(selector_doc: str) -> list[dict[str, Any]]:
    return [_col("Containers", _CONTAINERS_DOC, priority=1),
            _col("Images", _IMAGES_DOC, priority=1),
            _col("Selector", selector_doc, priority=1)]


_REPLICAS_COLS = [
    _name_col(),
    _col("Desired", "Replicas is the number of desired replicas.", "integer"),
    _col("Current", "Replicas is the most recently observed number of replicas.", "integer"),
    _col("Ready", "The number of ready replicas for this controller.", "integer"),
    _age_col(),
]

_COLUMNS: dict[str, list[dict[str, Any]]] = {
    "Pod": [
        _name_col(),
        _col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
        _col("Status", "The aggregate status of the containers in this pod."),
        _col("Restarts", "The number of times the containers in this pod have been restarted "
             "and when the last container in this pod has restarted."),
        _age_col(),
        _col("IP", "podIP address allocated to the pod. Routable at least within the cluster.",
             priority=1),
        _col("Node", "NodeName is a request to schedule this pod onto a specific node.",
             priority=1),
        _col("Nominated Node", "nominatedNodeName is set only when this pod preempts other "
             "pods on the node.", priority=1),
        _col("Readiness Gates", "If specified, all readiness gates will be evaluated for pod "
             "readiness.", priority=1),
    ],
    "Node": [
        _name_col(),
        _col("Status", "The status of the node"),
        _col("Roles", "The roles of the node"),
        _age_col(),
        _col("Version", "Kubelet Version reported by the node."),
        _col("Internal-IP", "List of addresses reachable to the node.", priority=1),
        _col("External-IP", "List of addresses reachable to the node.", priority=1),
        _col("OS-Image", "OS Image reported by the node from /etc/os-release.", priority=1),
        _col("Kernel-Version", "Kernel Version reported by the node from 'uname -r'.",
             priority=1),
        _col("Container-Runtime", "ContainerRuntime Version reported by the node through "
             "runtime remote API (e.g. containerd://1.4.2).", priority=1),
    ],
    "Namespace": [_name_col(), _col("Status", "The status of the namespace"), _age_col()],
    "Service": [
        _name_col(),
        _col("Type", "type determines how the Service is exposed."),
        _col("Cluster-IP", "clusterIP is the IP address of the service."),
        _col("External-IP", "externalIPs is a list of IP addresses for which nodes in the "
             "cluster will also accept traffic for this service."),
        _col("Port(s)", "The list of ports that are exposed by this service."),
        _age_col(),
        _col("Selector", "Route service traffic to pods with label keys and values matching "
             "this selector.", priority=1),
    ],
    "Endpoints": [
        _name_col(),
        _col("Endpoints", "The set of all endpoints is the union of all subsets."),
        _age_col(),
    ],
    "Event": [
        _col("Last Seen", "The time at which the most recent occurrence of this event was "
             "recorded."),
        _col("Type", "Type of this event (Normal, Warning), new types could be added in the "
             "future"),
        _col("Reason", "This should be a short, machine understandable string that gives the "
             "reason for the transition into the object's current status."),
        _col("Object", "The object that this event is about."),
        _col("Subobject", "If referring to a piece of an object instead of an entire object, "
             "this string should contain a valid JSON/Go field access statement.", priority=1),
        _col("Source", "The component reporting this event.", priority=1),
        _col("Message", "A human-readable description of the status of this operation."),
        _col("First Seen", "The time at which the event was first recorded.", priority=1),
        _col("Count", "The number of times this event has occurred.", priority=1),
        _name_col(priority=1),
    ],
    "ReplicationController": _REPLICAS_COLS + _template_cols(
        "Selector is a label query over pods that should match the Replicas count."),
    "ReplicaSet": _REPLICAS_COLS + _template_cols(
        "Selector is a label query over pods that should match the replica count."),
    "Deployment": [
        _name_col(),
        _col("Ready", "Number of the pod with ready state"),
        _col("Up-to-date", "Total number of non-terminated pods targeted by this deployment "
             "that have the desired template spec."),
        _col("Available", "Total number of available pods (ready for at least "
             "minReadySeconds) targeted by this deployment."),
        _age_col(),
    ] + _template_cols("Label selector for pods."),
    "Job": [
        _name_col(),
        _col("Status", "Status of the job."),
        _col("Completions", "The desired number of successfully finished pods the job should "
             "be run with."),
        _col("Duration", "Time required to complete the job."),
        _age_col(),
    ] + _template_cols("A label query over pods that should match the pod count."),
    "CronJob": [
        _name_col(),
        _col("Schedule", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
        _col("Timezone", "The time zone name for the given schedule, see "
             "https://en.wikipedia.org/wiki/List_of_tz_database_time_zones."),
        _col("Suspend", "This flag tells the controller to suspend subsequent executions."),
        _col("Active", "A list of pointers to currently running jobs.", "integer"),
        _col("Last Schedule", "Information when was the last time the job was successfully "
             "scheduled."),
        _age_col(),
    ] + _template_cols("A label query over pods that should match the pod count."),
    "HorizontalPodAutoscaler": [
        _name_col(),
        _col("Reference", "reference is the reference of the scale target"),
        _col("Targets", "the current and target metrics"),
        _col("MinPods", "minReplicas is the lower limit for the number of replicas"),
        _col("MaxPods", "maxReplicas is the upper limit for the number of replicas"),
        _col("Replicas", "currentReplicas is the current number of replicas of pods"),
        _age_col(),
    ],
    "PodTemplate": [
        _name_col(),
        _col("Containers", _CONTAINERS_DOC),
        _col("Images", _IMAGES_DOC),
        _col("Pod Labels", "The labels for the pod template."),
    ],
    "Secret": [
        _name_col(),
        _col("Type", "Used to facilitate programmatic handling of secret data."),
        _col("Data", "Data contains the secret data."),
        _age_col(),
    ],
    "ConfigMap": [_name_col(), _col("Data", "Data contains the configuration data."),
                  _age_col()],
    "ServiceAccount": [
        _name_col(),
        _col("Secrets", "Secrets is a list of the secrets in the same namespace that pods "
             "running using this ServiceAccount are allowed to use."),
        _age_col(),
    ],
    "ResourceQuota": [
        _name_col(),
        _age_col(),
        _col("Request", "Request represents a minimum amount of cpu/memory that a container "
             "may consume."),
        _col("Limit", "Limits control the maximum amount of cpu/memory that a container may "
             "use independent of contention on the node."),
    ],
    "ComponentStatus": [
        _name_col(),
        _col("Status", "Status of the component conditions"),
        _col("Message", "Message of the component conditions"),
        _col("Error", "Error of the component conditions"),
    ],
    "Scale": [
        _col("Name", _NAME_DOC),
        _col("Desired", "desired number of instances for the scaled object.", "integer"),
        _col("Available", "actual number of observed instances of the scaled object.",
             "integer"),
        _age_col(),
    ],
}
_COLUMNS["PersistentVolume"] = [
    _name_col(),
    _col("Capacity", "capacity is the description of the persistent volume's resources and "
         "capacity."),
    _col("Access Modes", "accessModes contains all ways the volume can be mounted."),
    _col("Reclaim Policy", "persistentVolumeReclaimPolicy defines what happens to a persistent "
         "volume when released from its claim."),
    _col("Status", "phase indicates if a volume is available, bound to a claim, or released by "
         "a claim."),
    _col("Claim", "claimRef is part of a bi-directional binding between PersistentVolume and "
         "PersistentVolumeClaim."),
    _col("StorageClass", "StorageClass of the pv"),
    _col("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
    _col("Reason", "reason is a brief CamelCase string that describes any failure and is meant "
         "for machine parsing and tidy display in the CLI."),
    _age_col(),
    _col("VolumeMode", "volumeMode defines if a volume is intended to be used with a formatted "
         "filesystem or to remain in raw block state.", priority=1),
]
_COLUMNS["PersistentVolumeClaim"] = [
    _name_col(),
    _col("Status", "phase represents the current phase of PersistentVolumeClaim."),
    _col("Volume", "volumeName is the binding reference to the PersistentVolume backing this "
         "claim."),
    _col("Capacity", "capacity represents the actual resources of the underlying volume."),
    _col("Access Modes", "accessModes contains the actual access modes the volume backing the "
         "PVC has."),
    _col("StorageClass", "StorageClass of the pvc"),
    _col("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
    _age_col(),
    _col("VolumeMode", "volumeMode defines what type of volume is required by the claim.",
         priority=1),
]
_COLUMNS["PriorityClass"] = [
    _name_col(),
    _col("Value", "value represents the integer value of this priority class. This is the "
         "actual priority that pods receive when they have the name of this class in their pod "
         "spec.", "integer"),
    _col("Global-Default", "globalDefault specifies whether this PriorityClass should be "
         "considered as the default priority for pods that do not have any priority class. "
         "Only one PriorityClass can be marked as `globalDefault`. However, if more than one "
         "PriorityClasses exists with their `globalDefault` field set to true, the smallest "
         "value of such global default PriorityClasses will be used as the default priority.",
         "boolean"),
    _age_col(),
    _col("PreemptionPolicy", "preemptionPolicy is the Policy for preempting pods with lower "
         "priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if "
         "unset."),
]
#: kube-aggregator's registry/apiservice/etcd table convertor
_COLUMNS["APIService"] = [
    _name_col(),
    _col("Service", "The reference to the service that hosts this API endpoint."),
    _col("Available", "Whether this service is available."),
    _age_col(),
]
#: printers.go certificateSigningRequestColumnDefinitions (descriptions: the v1beta1 SwaggerDocs)
_COLUMNS["CertificateSigningRequest"] = [
    _name_col(),
    _age_col(),
    _col("SignerName", "Requested signer for the request. It is a qualified name in the form: "
         "`scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet "
         "client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet"
         "\".\n 2. If it's a kubelet serving certificate, it is assigned\n    "
         "\"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned "
         "\"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of "
         "band.\nYou can select on this field using `spec.signerName`."),
    _col("Requestor", "Base64-encoded PKCS#10 CSR data"),
    _col("RequestedDuration", "expirationSeconds is the requested duration of validity of the "
         "issued certificate. The certificate signer may issue a certificate with a different "
         "validity duration so a client must check the delta between the notBefore and and "
         "notAfter fields in the issued certificate to determine the actual duration."),
    _col("Condition", "Conditions applied to the request, such as approval or denial."),
]
_COLUMNS["ValidatingAdmissionPolicy"] = [
    _name_col(),
    _col("Validations", "Validations indicates the number of validation rules defined in this "
         "configuration", "integer"),
    _col("ParamKind", "ParamKind specifies the kind of resources used to parameterize this "
         "policy"),
    _age_col(),
]
_COLUMNS["ValidatingAdmissionPolicyBinding"] = [
    _name_col(),
    _col("PolicyName", "PolicyName indicates the policy definition which the policy binding "
         "binded to"),
    _col("ParamRef", "ParamRef indicates the param resource which sets the configration param"),
    _age_col(),
]
#: ObjectMeta's docs as column descriptions (custom resources' tables reuse them)
NAME_DOC, AGE_DOC = _NAME_DOC, _AGE_DOC
# Kinds without an upstream printer get the apiserver's default table convertor.
_DEFAULT_CONVERTOR_COLUMNS = [_name_col(), _col("Created At", _AGE_DOC, "date")]
for _kind in ("LimitRange", "Binding", "CustomResourceDefinition", "Role", "ClusterRole"):
    _COLUMNS[_kind] = _DEFAULT_CONVERTOR_COLUMNS
# Anything else (a kind this table does not know) shows what kubectl's fallback would.
_UNKNOWN_COLUMNS = [_name_col(), _age_col()]


def column_definitions(kind: str) -> list[dict]:
    """The Table `columnDefinitions` for `kind`, wide columns included (priority 1).

    Cached: the same list object is returned every call; callers must not mutate it."""
    return _COLUMNS.get(kind, _UNKNOWN_COLUMNS)


def list_order(kind: str, objects: Iterable[dict]) -> Iterable[dict]:
    """The order a printed list's rows come in: as listed, except for kinds whose upstream list
    printer sorts (printFlowSchemaList: by matchingPrecedence, then name)."""
    key = _LIST_ORDER.get(kind)
    return objects if key is None else sorted(objects, key=key)


def row_cells(kind: str, obj: dict, now: float) -> list:
    """One Table row's `cells` for `obj` of `kind`, in `column_definitions(kind)` order.

    `now` is epoch seconds (ages are relative to it). Never raises on any JSON object."""
    if not isinstance(obj, dict):
        obj = {}
    return _ROWS.get(kind, _unknown_row)(obj, now)


# ---------------------------------------------------------------------------------------------
# Rows for the simple kinds (the pod, node, service, endpoints and event rows are below).


def _unknown_row(obj: Obj, now: float) -> list:
    return [_name(obj), _age(obj, now)]


def _default_convertor_row(obj: Obj, _now: float) -> list:
    """`Created At` is creationTimestamp.UTC() in RFC 3339; Go's zero time when missing."""
    epoch = parse_timestamp(_d(obj.get("metadata")).get("creationTimestamp"))
    return [_name(obj), _GO_ZERO_TIME_TEXT if epoch is None else rfc3339(epoch)]


def _apiservice_row(obj: Obj, now: float) -> list:
    """NAME, SERVICE (`Local` or namespace/name), AVAILABLE (`True`, `False (Reason)`,
    `Unknown` without the condition), AGE."""
    service = _d(obj.get("spec")).get("service")
    where = (f"{_s(_d(service).get('namespace'))}/{_s(_d(service).get('name'))}"
             if isinstance(service, dict) else "Local")
    available = "Unknown"
    for cond in _l(_d(obj.get("status")).get("conditions")):
        if _d(cond).get("type") == "Available":
            status, reason = _s(_d(cond).get("status")), _s(_d(cond).get("reason"))
            available = f"{status} ({reason})" if status != "True" and reason else status
    return [_name(obj), where, available, _age(obj, now)]


def csr_condition(obj: Obj) -> str:
    """extractCSRStatus: Denied over Approved over Pending, then `,Failed` and `,Issued`."""
    types = {_s(_d(c).get("type")) for c in _l(_d(obj.get("status")).get("conditions"))}
    text = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        text += ",Failed"
    if _d(obj.get("status")).get("certificate"):
        text += ",Issued"
    return text


def _csr_row(obj: Obj, now: float) -> list:
    """printCertificateSigningRequest: NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION
    CONDITION."""
    spec = _d(obj.get("spec"))
    expiration = spec.get("expirationSeconds")
    duration = (human_duration(expiration) if isinstance(expiration, int)
                and not isinstance(expiration, bool) else "<none>")
    return [_name(obj), _age(obj, now), _s(spec.get("signerName")) or "<none>",
            _s(spec.get("username")), duration, csr_condition(obj)]


def _priority_class_row(obj: Obj, now: float) -> list:
    """printPriorityClass: name, value, globalDefault, age, preemptionPolicy."""
    return [_name(obj), _n(obj.get("value")), obj.get("globalDefault") is True, _age(obj, now),
            _s(obj.get("preemptionPolicy"))]


def _validating_admission_policy_row(obj: Obj, now: float) -> list:
    """printValidatingAdmissionPolicy: name, number of validations, paramKind, age."""
    spec = _d(obj.get("spec"))
    kind = spec.get("paramKind")
    param_kind = (f"{_s(_d(kind).get('apiVersion'))}/{_s(_d(kind).get('kind'))}"
                  if isinstance(kind, dict) else "<unset>")
    return [_name(obj), len(_l(spec.get("validations"))), param_kind, _age(obj, now)]


def _validating_admission_policy_binding_row(obj: Obj, now: float) -> list:
    """printValidatingAdmissionPolicyBinding: name, policyName, paramRef, age (a paramRef
    without namespace prints `*/name`, a selector prints as a selector)."""
    spec = _d(obj.get("spec"))
    ref = spec.get("paramRef")
    param = "<unset>"
    if isinstance(ref, dict):
        if ref.get("name"):
            param = f"{ref.get('namespace') or '*'}/{_s(ref['name'])}"
        elif isinstance(ref.get("selector"), dict):
            param = format_label_selector(ref["selector"])
    return [_name(obj), _s(spec.get("policyName")), param, _age(obj, now)]


def _namespace_row(obj: Obj, now: float) -> list:
    return [_name(obj), _s(_d(obj.get("status")).get("phase")), _age(obj, now)]


def _secret_row(obj: Obj, now: float) -> list:
    return [_name(obj), _s(obj.get("type")), len(_d(obj.get("data"))), _age(obj, now)]


def _configmap_row(obj: Obj, now: float) -> list:
    count = len(_d(obj.get("data"))) + len(_d(obj.get("binaryData")))
    return [_name(obj), count, _age(obj, now)]


def _serviceaccount_row(obj: Obj, now: float) -> list:
    return [_name(obj), len(_l(obj.get("secrets"))), _age(obj, now)]


def _component_status_row(obj: Obj, _now: float) -> list:
    """Status from the `Healthy` condition; `Unknown` when there is none."""
    for condition in _l(obj.get("conditions")):
        condition = _d(condition)
        if condition.get("type") == "Healthy":
            status = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            return [_name(obj), status, _s(condition.get("message")),
                    _s(condition.get("error"))]
    return [_name(obj), "Unknown", "", ""]


def _replication_controller_row(obj: Obj, now: float) -> list:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    template_spec = _d(_d(spec.get("template")).get("spec"))
    return [_name(obj), _n(spec.get("replicas")), _n(status.get("replicas")),
            _n(status.get("readyReplicas")), _age(obj, now),
            *_containers_cells(template_spec), format_labels(spec.get("selector"))]


def _replica_set_row(obj: Obj, now: float) -> list:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    template_spec = _d(_d(spec.get("template")).get("spec"))
    return [_name(obj), _n(spec.get("replicas")), _n(status.get("replicas")),
            _n(status.get("readyReplicas")), _age(obj, now),
            *_containers_cells(template_spec), format_label_selector(spec.get("selector"))]


def _deployment_row(obj: Obj, now: float) -> list:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    template_spec = _d(_d(spec.get("template")).get("spec"))
    selector = _selector_string(spec.get("selector"))
    ready = f"{_n(status.get('readyReplicas'))}/{_n(spec.get('replicas'))}"
    return [_name(obj), ready, _n(status.get("updatedReplicas")),
            _n(status.get("availableReplicas")), _age(obj, now),
            *_containers_cells(template_spec), "<invalid>" if selector is None else selector]


def _job_row(obj: Obj, now: float) -> list:
    """printers.go printJob: STATUS from the conditions, `succeeded/completions` (or `n/1 of
    <parallelism>` for a work queue), DURATION from startTime to completionTime (or now)."""
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    succeeded = _n(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_n(spec.get('completions'))}"
    elif _n(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {_n(spec.get('parallelism'))}"
    else:
        completions = f"{succeeded}/1"
    started = parse_timestamp(status.get("startTime"))
    finished = parse_timestamp(status.get("completionTime"))
    duration = "" if started is None else human_duration((finished or now) - started)
    template_spec = _d(_d(spec.get("template")).get("spec"))
    return [_name(obj), job_status_text(obj), completions, duration, _age(obj, now),
            *_containers_cells(template_spec), format_label_selector(spec.get("selector"))]


def _cron_job_row(obj: Obj, now: float) -> list:
    """printers.go printCronJob."""
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    last = parse_timestamp(status.get("lastScheduleTime"))
    suspend = spec.get("suspend")
    job_spec = _d(_d(spec.get("jobTemplate")).get("spec"))
    template_spec = _d(_d(job_spec.get("template")).get("spec"))
    return [_name(obj), _s(spec.get("schedule")),
            _s(spec.get("timeZone")) if spec.get("timeZone") is not None else "<none>",
            "<unset>" if not isinstance(suspend, bool) else str(suspend),
            len(_l(status.get("active"))),
            "<none>" if last is None else human_duration(now - last), _age(obj, now),
            *_containers_cells(template_spec), format_label_selector(job_spec.get("selector"))]


def _hpa_targets(spec: Obj, status: Obj) -> str:
    """printers.go formatHPAMetrics: `cpu: 45%/50%` per metric, `<unknown>` before the first
    reading, the first three then `+ N more...`."""
    specs, current = _l(spec.get("metrics")), _l(status.get("currentMetrics"))
    if not specs:
        return "<none>"
    parts = []
    for i, metric in enumerate(specs[:3]):
        metric = _d(metric)
        kind = _s(metric.get("type"))
        field = kind[:1].lower() + kind[1:]
        source = _d(metric.get(field))
        target = _d(source.get("target"))
        now = _d(_d(current[i]).get(field)) if i < len(current) else {}
        now_value = _d(now.get("current"))
        name = _s(source.get("name")) or _s(_d(source.get("metric")).get("name"))
        if target.get("type") == "Utilization":
            have = now_value.get("averageUtilization")
            text = f"{'<unknown>' if have is None else str(have) + '%'}/{target.get('averageUtilization')}%"
        elif target.get("type") == "AverageValue":
            have = now_value.get("averageValue")
            text = f"{'<unknown>' if have is None else have}/{target.get('averageValue')}"
        else:
            have = now_value.get("value")
            text = f"{'<unknown>' if have is None else have}/{target.get('value')}"
        parts.append(f"{name}: {text}" if kind in ("Resource", "ContainerResource") else text)
    more = f" + {len(specs) - 3} more..." if len(specs) > 3 else ""
    return ", ".join(parts) + more


def _hpa_row(obj: Obj, now: float) -> list:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    ref = _d(spec.get("scaleTargetRef"))
    minimum = spec.get("minReplicas")
    return [_name(obj), f"{_s(ref.get('kind'))}/{_s(ref.get('name'))}", _hpa_targets(spec, status),
            "<unset>" if minimum is None else minimum, _n(spec.get("maxReplicas")),
            _n(status.get("currentReplicas")), _age(obj, now)]


def _pod_template_row(obj: Obj, _now: float) -> list:
    template = _d(obj.get("template"))
    labels = _d(template.get("metadata")).get("labels")
    return [_name(obj), *_containers_cells(_d(template.get("spec"))), format_labels(labels)]


def _resource_quota_row(obj: Obj, now: float) -> list:
    """`pods: 1/10, requests.cpu: 0/2`; `limits.*` resources go to the Limit column."""
    status = _d(obj.get("status"))
    hard, used = _d(status.get("hard")), _d(status.get("used"))
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        target = limits if resource.split(".")[0] == "limits" and "." in resource else requests
        target.append(f"{resource}: {_quantity(used.get(resource, '0'))}/"
                      f"{_quantity(hard[resource])}")
    return [_name(obj), _age(obj, now), ", ".join(requests), ", ".join(limits)]


def _scale_row(obj: Obj, now: float) -> list:
    return [_name(obj), _n(_d(obj.get("spec")).get("replicas")),
            _n(_d(obj.get("status")).get("replicas")), _age(obj, now)]


def _volume_phase(obj: Obj) -> str:
    if _d(obj.get("metadata")).get("deletionTimestamp"):
        return "Terminating"
    return _s(_d(obj.get("status")).get("phase"))


def _unset(value: Any) -> str:
    return value if isinstance(value, str) else "<unset>"


def _persistent_volume_row(obj: Obj, now: float) -> list:
    """printPersistentVolume."""
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    claim_ref = spec.get("claimRef")
    claim = ""
    if isinstance(claim_ref, dict):
        claim = f"{_s(claim_ref.get('namespace'))}/{_s(claim_ref.get('name'))}"
    capacity = _d(spec.get("capacity")).get("storage")
    return [_name(obj), "0" if capacity is None else _quantity(capacity),
            access_modes_text(spec.get("accessModes")),
            _s(spec.get("persistentVolumeReclaimPolicy")), _volume_phase(obj), claim,
            storage_class_of(obj), _unset(spec.get("volumeAttributesClassName")),
            _s(status.get("reason")), _age(obj, now), _unset(spec.get("volumeMode"))]


def _persistent_volume_claim_row(obj: Obj, now: float) -> list:
    """printPersistentVolumeClaim: capacity and modes only once a volume is named."""
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    volume = _s(spec.get("volumeName"))
    capacity = modes = ""
    if volume:
        modes = access_modes_text(status.get("accessModes"))
        raw = _d(status.get("capacity")).get("storage")
        capacity = "0" if raw is None else _quantity(raw)
    return [_name(obj), _volume_phase(obj), volume, capacity, modes, storage_class_of(obj),
            _unset(spec.get("volumeAttributesClassName")), _age(obj, now),
            _unset(spec.get("volumeMode"))]


_ROWS: dict[str, Row] = {
    "Pod": pod_row,
    "Node": node_row,
    "Namespace": _namespace_row,
    "Service": service_row,
    "Endpoints": endpoints_row,
    "Event": event_row,
    "ReplicationController": _replication_controller_row,
    "ReplicaSet": _replica_set_row,
    "Deployment": _deployment_row,
    "Job": _job_row,
    "CronJob": _cron_job_row,
    "HorizontalPodAutoscaler": _hpa_row,
    "PodTemplate": _pod_template_row,
    "Secret": _secret_row,
    "ConfigMap": _configmap_row,
    "ServiceAccount": _serviceaccount_row,
    "ResourceQuota": _resource_quota_row,
    "ComponentStatus": _component_status_row,
    "Scale": _scale_row,
    "LimitRange": _default_convertor_row,
    "Binding": _default_convertor_row,
    "CustomResourceDefinition": _default_convertor_row,  # upstream: no printer of its own
    "PersistentVolume": _persistent_volume_row,
    "PersistentVolumeClaim": _persistent_volume_claim_row,
    "PriorityClass": _priority_class_row,
    "Role": _default_convertor_row,  # upstream: no printer of its own (NAME, CREATED AT)
    "ClusterRole": _default_convertor_row,
    "APIService": _apiservice_row,
    "CertificateSigningRequest": _csr_row,
    "ValidatingAdmissionPolicy": _validating_admission_policy_row,
    "ValidatingAdmissionPolicyBinding": _validating_admission_policy_binding_row,
}


# admissionregistration.k8s.io webhook configurations (upstream printMutatingWebhook,
# printValidatingWebhook): name, how many webhooks, age.
def _webhook_configuration_row(obj: Obj, now: float) -> list:
    return [_name(obj), len(_l(obj.get("webhooks"))), _age(obj, now)]


for _kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
    _COLUMNS[_kind] = [_name_col(), _col("Webhooks", "Webhooks indicates the number of webhooks "
                                                     "registered in this configuration",
                                         "integer"), _age_col()]
    _ROWS[_kind] = _webhook_configuration_row


# rbac.authorization.k8s.io bindings (upstream printRoleBinding, printClusterRoleBinding):
# name, `Kind/name` of the role, age; -o wide adds users, groups and service accounts
# (rbac.SubjectsStrings: a service account is `namespace/name`, or `name` without a namespace).
def _role_binding_row(obj: Obj, now: float) -> list:
    ref = _d(obj.get("roleRef"))
    kinds: dict[str, list[str]] = {"User": [], "Group": [], "ServiceAccount": []}
    for subject in _l(obj.get("subjects")):
        subject = _d(subject)
        name, namespace = _s(subject.get("name")), _s(subject.get("namespace"))
        if subject.get("kind") == "ServiceAccount" and namespace:
            name = f"{namespace}/{name}"
        if subject.get("kind") in kinds:
            kinds[subject["kind"]].append(name)
    return [_name(obj), f"{_s(ref.get('kind'))}/{_s(ref.get('name'))}", _age(obj, now),
            ", ".join(kinds["User"]), ", ".join(kinds["Group"]),
            ", ".join(kinds["ServiceAccount"])]


_ROLE_REF_DOC = {
    "RoleBinding": "RoleRef can reference a Role in the current namespace or a ClusterRole in "
                   "the global namespace. If the RoleRef cannot be resolved, the Authorizer "
                   "must return an error.",
    "ClusterRoleBinding": "RoleRef can only reference a ClusterRole in the global namespace. "
                          "If the RoleRef cannot be resolved, the Authorizer must return an "
                          "error.",
}
for _kind in ("RoleBinding", "ClusterRoleBinding"):
    _COLUMNS[_kind] = [
        _name_col(), _col("Role", _ROLE_REF_DOC[_kind]),
        _age_col(), _col("Users", f"Users in the {_kind[0].lower()}{_kind[1:]}", priority=1),
        _col("Groups", f"Groups in the {_kind[0].lower()}{_kind[1:]}", priority=1),
        _col("ServiceAccounts", f"ServiceAccounts in the {_kind[0].lower()}{_kind[1:]}",
             priority=1)]
    _ROWS[_kind] = _role_binding_row


# apps/v1 DaemonSet, StatefulSet, ControllerRevision (upstream printDaemonSet,
# printStatefulSet, printControllerRevision).
def _daemon_set_row(obj: Obj, now: float) -> list:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    template_spec = _d(_d(spec.get("template")).get("spec"))
    return [_name(obj), _n(status.get("desiredNumberScheduled")),
            _n(status.get("currentNumberScheduled")), _n(status.get("numberReady")),
            _n(status.get("updatedNumberScheduled")), _n(status.get("numberAvailable")),
            format_labels(template_spec.get("nodeSelector")), _age(obj, now),
            *_containers_cells(template_spec), format_label_selector(spec.get("selector"))]


def _stateful_set_row(obj: Obj, now: float) -> list:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    template_spec = _d(_d(spec.get("template")).get("spec"))
    ready = f"{_n(status.get('readyReplicas'))}/{_n(spec.get('replicas'))}"
    return [_name(obj), ready, _age(obj, now), *_containers_cells(template_spec)]


def _controller_revision_row(obj: Obj, now: float) -> list:
    """The controller as `kind.group/name` in lower case (formatResourceName withKind)."""
    controller = "<none>"
    for ref in _l(_d(obj.get("metadata")).get("ownerReferences")):
        ref = _d(ref)
        if ref.get("controller"):
            group = _s(ref.get("apiVersion")).rpartition("/")[0]
            kind = _s(ref.get("kind")) + (f".{group}" if group else "")
            controller = f"{kind.lower()}/{_s(ref.get('name'))}"
            break
    return [_name(obj), controller, _n(obj.get("revision")), _age(obj, now)]


_COLUMNS["DaemonSet"] = [
    _name_col(),
    _col("Desired", "The total number of nodes that should be running the daemon pod "
         "(including nodes correctly running the daemon pod).", "integer"),
    _col("Current", "The number of nodes that are running at least 1 daemon pod and are "
         "supposed to run the daemon pod.", "integer"),
    _col("Ready", "numberReady is the number of nodes that should be running the daemon pod "
         "and have one or more of the daemon pod running with a Ready Condition.", "integer"),
    _col("Up-to-date", "The total number of nodes that are running updated daemon pod",
         "integer"),
    _col("Available", "The number of nodes that should be running the daemon pod and have one "
         "or more of the daemon pod running and available (ready for at least "
         "spec.minReadySeconds)", "integer"),
    _col("Node Selector", "NodeSelector is a selector which must be true for the pod to fit "
         "on a node. Selector which must match a node's labels for the pod to be scheduled on "
         "that node."),
    _age_col(),
] + _template_cols("A label query over pods that are managed by the daemon set.")
_ROWS["DaemonSet"] = _daemon_set_row
_COLUMNS["StatefulSet"] = [
    _name_col(),
    _col("Ready", "Number of the pod with ready state"),
    _age_col(),
    _col("Containers", _CONTAINERS_DOC, priority=1),
    _col("Images", _IMAGES_DOC, priority=1),
]
_ROWS["StatefulSet"] = _stateful_set_row
_COLUMNS["ControllerRevision"] = [
    _name_col(),
    _col("Controller", "Controller of the object"),
    _col("Revision", "Revision indicates the revision of the state represented by Data.",
         "integer"),
    _age_col(),
]
_ROWS["ControllerRevision"] = _controller_revision_row


# policy/v1 PodDisruptionBudgets (upstream printPodDisruptionBudget): MIN AVAILABLE and MAX
# UNAVAILABLE print the int or percent as written, `N/A` when unset.
def _int_or_string(value: Any) -> str:
    return "N/A" if value is None else str(value)


def _pod_disruption_budget_row(obj: Obj, now: float) -> list:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    return [_name(obj), _int_or_string(spec.get("minAvailable")),
            _int_or_string(spec.get("maxUnavailable")), _n(status.get("disruptionsAllowed")),
            _age(obj, now)]


_COLUMNS["PodDisruptionBudget"] = [
    _name_col(), _col("Min Available", "The minimum number of pods that must be available."),
    _col("Max Unavailable", "The maximum number of pods that may be unavailable."),
    _col("Allowed Disruptions", "Calculated number of pods that may be disrupted at this "
         "time.", "integer"), _age_col()]
_ROWS["PodDisruptionBudget"] = _pod_disruption_budget_row


# discovery.k8s.io/v1 EndpointSlices (upstream printEndpointSlice, formatDiscoveryPorts,
# formatDiscoveryEndpoints, listWithMoreString): the first three ports (`*` for "all ports")
# and addresses, then `+ N more...`; `<unset>` when there are none.
def _list_with_more(items: list[str], limit: int = 3) -> str:
    if len(items) > limit:
        return ",".join(items[:limit]) + f" + {len(items) - limit} more..."
    return ",".join(items) or "<unset>"


def _discovery_port(port: Obj) -> str:
    if port.get("port") is not None:
        return str(port["port"])
    return str(port["name"]) if port.get("name") is not None else "*"


def _endpoint_slice_row(obj: Obj, now: float) -> list:
    ports = [_discovery_port(p) for p in (obj.get("ports") or ()) if isinstance(p, dict)]
    addresses = [a for e in (obj.get("endpoints") or ()) if isinstance(e, dict)
                 for a in (e.get("addresses") or ())]
    return [_name(obj), obj.get("addressType", ""), _list_with_more(ports),
            _list_with_more(addresses), _age(obj, now)]


_COLUMNS["EndpointSlice"] = [
    _name_col(),
    _col("AddressType", "addressType specifies the type of address carried by this "
         "EndpointSlice. All addresses in this slice must be the same type. This field is "
         "immutable after creation. The following address types are currently supported: * "
         "IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: "
         "Represents a Fully Qualified Domain Name."),
    _col("Ports", "ports specifies the list of network ports exposed by each endpoint in this "
         "slice. Each port must have a unique name. When ports is empty, it indicates that "
         "there are no defined ports. When a port is defined with a nil port value, it "
         "indicates \"all ports\". Each slice may include a maximum of 100 ports."),
    _col("Endpoints", "endpoints is a list of unique endpoints in this slice. Each slice may "
         "include a maximum of 1000 endpoints."),
    _age_col()]
_ROWS["EndpointSlice"] = _endpoint_slice_row
# networking.k8s.io/v1, node.k8s.io/v1 and flowcontrol.apiserver.k8s.io/v1 (issue 19; upstream
# printIngress, printIngressClass, printNetworkPolicy, printRuntimeClass, printFlowSchema,
# printPriorityLevelConfiguration). Ingress cells come from api/networking.py.
def _ingress_row(obj: Obj, now: float) -> list:
    class_name = _d(obj.get("spec")).get("ingressClassName")
    return [_name(obj), _s(class_name) if isinstance(class_name, str) else "<none>",
            ingress_hosts(obj), ingress_address(obj), ingress_ports(obj), _age(obj, now)]


def _ingress_class_row(obj: Obj, now: float) -> list:
    spec = _d(obj.get("spec"))
    params, parameters = spec.get("parameters"), "<none>"
    if isinstance(params, dict):
        parameters = _s(params.get("kind"))
        if isinstance(params.get("apiGroup"), str):
            parameters += "." + params["apiGroup"]
        parameters += "/" + _s(params.get("name"))
    return [_name(obj), _s(spec.get("controller")), parameters, _age(obj, now)]


def _flow_schema_row(obj: Obj, now: float) -> list:
    spec = _d(obj.get("spec"))
    method = _d(spec.get("distinguisherMethod")).get("type")
    missing = "Unknown"
    for cond in _l(_d(obj.get("status")).get("conditions")):
        if _d(cond).get("type") == "Dangling":
            missing = _s(_d(cond).get("status"))
    return [_name(obj), _s(_d(spec.get("priorityLevelConfiguration")).get("name")),
            _n(spec.get("matchingPrecedence")), _s(method) if method else "<none>",
            _age(obj, now), missing]


def _priority_level_row(obj: Obj, now: float) -> list:
    spec = _d(obj.get("spec"))
    cells: list = ["<none>"] * 4
    limited = spec.get("limited")
    if isinstance(limited, dict):
        cells[0] = _n(limited.get("nominalConcurrencyShares"))
        queuing = _d(limited.get("limitResponse")).get("queuing")
        if isinstance(queuing, dict):
            cells[1:] = [_n(queuing.get(k)) for k in ("queues", "handSize", "queueLengthLimit")]
    return [_name(obj), _s(spec.get("type")), *cells, _age(obj, now)]


_COLUMNS["Ingress"] = [
    _name_col(), _col("Class", "The name of the IngressClass resource that should be used for "
                      "additional configuration"),
    _col("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
    _col("Address", "Address is a list containing ingress points for the load-balancer"),
    _col("Ports", "Ports of TLS configurations that open"), _age_col()]
_ROWS["Ingress"] = _ingress_row
_COLUMNS["IngressClass"] = [
    _name_col(), _col("Controller", "Controller that is responsible for handling this class"),
    _col("Parameters", "A reference to a resource with additional parameters"), _age_col()]
_ROWS["IngressClass"] = _ingress_class_row
_COLUMNS["NetworkPolicy"] = [_name_col(), _col("Pod-Selector", "Pod selector"), _age_col()]
_ROWS["NetworkPolicy"] = lambda obj, now: [
    _name(obj), format_label_selector(_d(obj.get("spec")).get("podSelector") or {}),
    _age(obj, now)]
_COLUMNS["RuntimeClass"] = [_name_col(), _col("Handler", "RuntimeClass Handler"), _age_col()]
_ROWS["RuntimeClass"] = lambda obj, now: [_name(obj), _s(obj.get("handler")), _age(obj, now)]
_COLUMNS["FlowSchema"] = [
    _name_col(), _col("PriorityLevel", "`name` is the name of the priority level configuration "
                      "being referenced Required."),
    _col("MatchingPrecedence", "`matchingPrecedence` is used to choose among the FlowSchemas "
         "that match a given request."),
    _col("DistinguisherMethod", "`distinguisherMethod` defines how to compute the flow "
         "distinguisher for requests that match this schema."),
    _age_col(), _col("MissingPL", "indicates if the referenced priority level exists")]
_ROWS["FlowSchema"] = _flow_schema_row
_COLUMNS["PriorityLevelConfiguration"] = [
    _name_col(), _col("Type", "`type` indicates whether this priority level is subject to "
                      "limitation on request execution."),
    _col("NominalConcurrencyShares", "`nominalConcurrencyShares` (NCS) contributes to the "
         "computation of the NominalConcurrencyLimit (NominalCL) of this level."),
    _col("Queues", "`queues` is the number of queues for this priority level."),
    _col("HandSize", "`handSize` is a small positive number that configures the shuffle "
         "sharding of requests into queues."),
    _col("QueueLengthLimit", "`queueLengthLimit` is the maximum number of requests allowed to "
         "be waiting in a given queue of this priority level at a time"), _age_col()]
_ROWS["PriorityLevelConfiguration"] = _priority_level_row
#: kinds whose list printer sorts its rows (apihelpers.FlowSchemaSequence)
_LIST_ORDER: dict[str, Callable[[dict], Any]] = {
    "FlowSchema": lambda fs: (_n(_d(fs.get("spec")).get("matchingPrecedence")), _name(fs)),
}


# storage.k8s.io/v1 (api/tables_storage.py: printStorageClass, printCSIDriver, ...)
def _register_storage() -> None:
    from minikube_py.api.tables_storage import TABLES

    for kind, (columns, row) in TABLES.items():
        _COLUMNS[kind] = [_name_col()] + [_col(name, doc or _AGE_DOC, type_)
                                          for name, doc, type_ in columns]
        _ROWS[kind] = row


_register_storage()
