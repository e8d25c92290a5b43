"""Defaulting: fill the fields a client may omit, in place, before validation and storage.

Kubernetes piece: pkg/api/v1/defaults.go (SetDefaults_Pod, _PodSpec, _Container, _Service,
_ReplicationController, _Secret, _Endpoints, _NamespaceStatus, _NodeStatus, _ResourceList, ...),
the declarative `+default` markers of later releases (container port protocol, replicas) and
pkg/apis/apps/v1/defaults.go (Deployment, ReplicaSet). Defaults are what make `kubectl get -o
yaml` show `restartPolicy: Always` and `imagePullPolicy: IfNotPresent` although nobody wrote
them, and validation relies on them (it reports `Required value` for a missing dnsPolicy, as
upstream does for an un-defaulted object).

Only defaulting lives here. Things upstream does elsewhere are left to their owners: the pod's
`status.phase: Pending` and qosClass come from the registry strategy (`pod_initial_status` is
offered as a helper), `priority`, `serviceAccountName` and the not-ready/unreachable
tolerations come from admission plugins. Two conversions that upstream performs while decoding
are done here because we never decode into typed structs: a Secret's `stringData` is folded
into `data`, and a Service's `clusterIP` is mirrored into `clusterIPs`.

Every function tolerates any JSON: a field of the wrong type is left alone for validation to
report, never an exception.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from minikube_py.api import flowcontrol, hpa, networking, quantity
from minikube_py.api.admissionpolicy import default_binding, default_policy
from minikube_py.api.batch import default_cron_job_spec, default_job_spec
from minikube_py.api.priority import PREEMPT_LOWER_PRIORITY
from minikube_py.api.rbac import default_binding as default_rbac_binding
from minikube_py.api.storage import set_defaults_csi_driver, set_defaults_storage_class

__all__ = ["apply_defaults", "pod_initial_status", "qos_class"]

Obj = dict[str, Any]

DEFAULT_TERMINATION_GRACE_PERIOD = 30
DEFAULT_SCHEDULER_NAME = "default-scheduler"
TERMINATION_MESSAGE_PATH = "/dev/termination-log"
DEFAULT_FILE_MODE = 420  # 0644, upstream *VolumeSourceDefaultMode
DEFAULT_CLIENT_IP_TIMEOUT = 10800
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def apply_defaults(kind: str, obj: Obj, group: str | None = None) -> None:
    """Default `obj` (a decoded `kind` object) in place; unknown kinds are left untouched.
    `group`: the API group the object is served in, when the caller serves any group (a
    custom resource's kind may be `Job` or `Deployment` in its own group, and gets none of
    batch's or apps' defaults); None for callers that only ever pass built-in kinds."""
    entry = _DEFAULTERS.get(kind)
    if entry is None or not isinstance(obj, dict):
        return
    own_group, fn = entry
    if group is None or group == own_group:
        fn(obj)


# ---------------------------------------------------------------------------------------------
# Small helpers: get-or-create a sub-object only when the slot is empty, so wrong types survive.


def _child(obj: Obj, key: str, create: bool = False) -> Obj | None:
    value = obj.get(key)
    if isinstance(value, dict):
        return value
    if value is None and create:
        value = obj[key] = {}
        return value
    return None


def _dicts(obj: Obj, key: str) -> list[Obj]:
    value = obj.get(key)
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _setdefault(obj: Obj, key: str, value: Any) -> None:
    """Set `key` when absent, null or "" (Go's zero value for strings)."""
    current = obj.get(key)
    if current is None or current == "":
        obj[key] = value


# ---------------------------------------------------------------------------------------------
# Resource lists (SetDefaults_ResourceList): round up to milli-units, print canonically.


def _resource_list(obj: Obj | None, key: str) -> None:
    if obj is None:
        return
    resources = obj.get(key)
    if not isinstance(resources, dict):
        return
    for name, raw in resources.items():
        if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
            try:
                resources[name] = quantity.round_up_milli(raw)
            except ValueError:
                pass  # validation reports it with upstream's message


# ---------------------------------------------------------------------------------------------
# Pods and pod templates


def _image_pull_policy(image: Any) -> str:
    """Always for `:latest` or an untagged image, else IfNotPresent (upstream
    parsers.ParseImageName: a digest without a tag counts as tagged)."""
    if not isinstance(image, str) or not image:
        return "IfNotPresent"
    name = image.split("@", 1)[0]
    if "@" in image:
        last = name.rsplit("/", 1)[-1]
        return "Always" if last.endswith(":latest") else "IfNotPresent"
    last = name.rsplit("/", 1)[-1]
    if ":" not in last:
        return "Always"
    return "Always" if last.rsplit(":", 1)[1] == "latest" else "IfNotPresent"


def _http_get(handler: Obj | None) -> None:
    if handler is None:
        return
    action = _child(handler, "httpGet")
    if action is not None:
        _setdefault(action, "path", "/")
        _setdefault(action, "scheme", "HTTP")


def _probe(container: Obj, key: str) -> None:
    probe = _child(container, key)
    if probe is None:
        return
    for field, default in (("timeoutSeconds", 1), ("periodSeconds", 10),
                           ("successThreshold", 1), ("failureThreshold", 3)):
        if probe.get(field) in (None, 0):
            probe[field] = default
    _http_get(probe)


def _field_ref(holder: Obj | None) -> None:
    """SetDefaults_ObjectFieldSelector: fieldRef.apiVersion defaults to v1."""
    if holder is None:
        return
    ref = _child(holder, "fieldRef")
    if ref is not None:
        _setdefault(ref, "apiVersion", "v1")


def _container(container: Obj) -> None:
    if container.get("imagePullPolicy") in (None, ""):
        container["imagePullPolicy"] = _image_pull_policy(container.get("image"))
    _setdefault(container, "terminationMessagePath", TERMINATION_MESSAGE_PATH)
    _setdefault(container, "terminationMessagePolicy", "File")
    for port in _dicts(container, "ports"):
        _setdefault(port, "protocol", "TCP")
    resources = _child(container, "resources", create=True)
    _resource_list(resources, "limits")
    _resource_list(resources, "requests")
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(container, key)
    lifecycle = _child(container, "lifecycle")
    if lifecycle is not None:
        _http_get(_child(lifecycle, "postStart"))
        _http_get(_child(lifecycle, "preStop"))
    for env in _dicts(container, "env"):
        _field_ref(_child(env, "valueFrom"))


_VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret",
    "nfs", "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder",
    "cephfs", "flocker", "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume",
    "quobyte", "azureDisk", "photonPersistentDisk", "projected", "portworxVolume", "scaleIO",
    "storageos", "csi", "ephemeral", "image",
)


def _volume(volume: Obj) -> None:
    if all(volume.get(source) is None for source in _VOLUME_SOURCES):
        volume["emptyDir"] = {}
        return
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        source = _child(volume, key)
        if source is not None and source.get("defaultMode") is None:
            source["defaultMode"] = DEFAULT_FILE_MODE
    host_path = _child(volume, "hostPath")
    if host_path is not None and host_path.get("type") is None:
        host_path["type"] = ""
    downward = _child(volume, "downwardAPI")
    if downward is not None:
        for item in _dicts(downward, "items"):
            _field_ref(item)
    projected = _child(volume, "projected")
    if projected is not None:
        for source in _dicts(projected, "sources"):
            token = _child(source, "serviceAccountToken")
            if token is not None and token.get("expirationSeconds") is None:
                token["expirationSeconds"] = 3600
            projected_api = _child(source, "downwardAPI")
            if projected_api is not None:
                for item in _dicts(projected_api, "items"):
                    _field_ref(item)


def _pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec plus the per-container, per-volume defaults inside it."""
    _setdefault(spec, "dnsPolicy", "ClusterFirst")
    _setdefault(spec, "restartPolicy", "Always")
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD
    _setdefault(spec, "schedulerName", DEFAULT_SCHEDULER_NAME)
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in _dicts(spec, key):
            _container(container)
    for volume in _dicts(spec, "volumes"):
        _volume(volume)
    _resource_list(spec, "overhead")


def _requests_from_limits(container: Obj) -> None:
    """SetDefaults_Pod: a limit without a request makes the request equal to the limit."""
    resources = _child(container, "resources")
    if resources is None:
        return
    limits = resources.get("limits")
    if not isinstance(limits, dict) or not limits:
        return
    requests = resources.get("requests")
    if requests is None:
        requests = resources["requests"] = {}
    if isinstance(requests, dict):
        for name, limit in limits.items():
            requests.setdefault(name, limit)


def _pod(pod: Obj) -> None:
    spec = _child(pod, "spec", create=True)
    if spec is None:
        return
    _pod_spec(spec)
    for key in ("containers", "initContainers"):
        for container in _dicts(spec, key):
            _requests_from_limits(container)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork") is True:
        for key in ("containers", "initContainers"):
            for container in _dicts(spec, key):
                for port in _dicts(container, "ports"):
                    host_port = port.get("hostPort")
                    if (host_port is None or host_port == 0) and _is_int(port.get("containerPort")):
                        port["hostPort"] = port["containerPort"]


def _template(owner: Obj | None) -> None:
    """A pod template inside an RC/RS/Deployment/PodTemplate gets PodSpec defaults only."""
    if owner is None:
        return
    template = _child(owner, "template")
    if template is None:
        return
    spec = _child(template, "spec", create=True)
    if spec is not None:
        _pod_spec(spec)


def _pod_template(obj: Obj) -> None:
    _template(obj)


# ---------------------------------------------------------------------------------------------
# Workloads


def _replication_controller(rc: Obj) -> None:
    spec = _child(rc, "spec", create=True)
    if spec is None:
        return
    template = _child(spec, "template")
    labels = None
    if template is not None:
        template_meta = _child(template, "metadata")
        labels = template_meta.get("labels") if template_meta is not None else None
    if isinstance(labels, dict):
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = _child(rc, "metadata", create=True)
        if meta is not None and not meta.get("labels"):
            meta["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    _template(spec)


def _replica_set(rs: Obj) -> None:
    spec = _child(rs, "spec", create=True)
    if spec is None:
        return
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    _template(spec)


def _deployment(deployment: Obj) -> None:
    spec = _child(deployment, "spec", create=True)
    if spec is None:
        return
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = _child(spec, "strategy", create=True)
    if strategy is not None:
        _setdefault(strategy, "type", "RollingUpdate")
        if strategy.get("type") == "RollingUpdate":
            rolling = _child(strategy, "rollingUpdate", create=True)
            if rolling is not None:
                for key in ("maxUnavailable", "maxSurge"):
                    if rolling.get(key) is None:
                        rolling[key] = "25%"
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = 600
    _template(spec)


def _job(job: Obj) -> None:
    """batch/v1 SetDefaults_Job (api/batch.py) plus the template's PodSpec defaults."""
    default_job_spec(job)
    _template(_child(job, "spec"))


def _cron_job(cron_job: Obj) -> None:
    """batch/v1 SetDefaults_CronJob; the job template's spec gets the PodSpec defaults (the
    Job's own defaults are applied when the controller creates the Job, as upstream)."""
    default_cron_job_spec(cron_job)
    spec = _child(cron_job, "spec")
    job_template = _child(spec, "jobTemplate") if spec is not None else None
    _template(_child(job_template, "spec") if job_template is not None else None)


# ---------------------------------------------------------------------------------------------
# Services and endpoints


def _externally_accessible(spec: Obj) -> bool:
    kind = spec.get("type")
    external_ips = spec.get("externalIPs")
    return kind in ("LoadBalancer", "NodePort") or (
        kind == "ClusterIP" and isinstance(external_ips, list) and bool(external_ips)
    )


def _service(service: Obj) -> None:
    spec = _child(service, "spec", create=True)
    if spec is None:
        return
    _setdefault(spec, "sessionAffinity", "None")
    if spec.get("sessionAffinity") == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec.get("sessionAffinity") == "ClientIP":
        config = spec.get("sessionAffinityConfig")
        client_ip = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client_ip, dict) or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {
                "clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_TIMEOUT}
            }
    _setdefault(spec, "type", "ClusterIP")
    for port in _dicts(spec, "ports"):
        _setdefault(port, "protocol", "TCP")
        target = port.get("targetPort")
        if (target is None or target == 0 or target == "") and _is_int(port.get("port")):
            port["targetPort"] = port["port"]
    if _externally_accessible(spec):
        _setdefault(spec, "externalTrafficPolicy", "Cluster")
    kind = spec.get("type")
    if kind in ("NodePort", "LoadBalancer", "ClusterIP"):
        _setdefault(spec, "internalTrafficPolicy", "Cluster")
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True
    if kind == "LoadBalancer":
        balancer = _child(_child(service, "status") or {}, "loadBalancer")
        for ingress in _dicts(balancer or {}, "ingress"):
            if ingress.get("ip") and ingress.get("ipMode") is None:
                ingress["ipMode"] = "VIP"
    _service_ip_fields(spec)


def _service_ip_fields(spec: Obj) -> None:
    """Mirror clusterIP into clusterIPs (upstream's strategy) and, for a single-stack IPv4
    cluster, record the family the allocator will use (upstream's REST does on create)."""
    if spec.get("type") == "ExternalName":
        return
    cluster_ip = spec.get("clusterIP")
    if isinstance(cluster_ip, str) and cluster_ip and spec.get("clusterIPs") in (None, []):
        spec["clusterIPs"] = [cluster_ip]
    if spec.get("ipFamilyPolicy") is None:
        spec["ipFamilyPolicy"] = "SingleStack"
    if spec.get("ipFamilies") in (None, []):
        ips = spec.get("clusterIPs")
        first = ips[0] if isinstance(ips, list) and ips else ""
        family = "IPv6" if isinstance(first, str) and ":" in first else "IPv4"
        spec["ipFamilies"] = [family]


def _endpoints(endpoints: Obj) -> None:
    for subset in _dicts(endpoints, "subsets"):
        for port in _dicts(subset, "ports"):
            _setdefault(port, "protocol", "TCP")


# ---------------------------------------------------------------------------------------------
# Cluster-scoped objects and configuration


def _namespace(namespace: Obj) -> None:
    meta = _child(namespace, "metadata")
    name = meta.get("name") if meta is not None else None
    if isinstance(name, str) and name:
        labels = _child(meta, "labels", create=True)
        if labels is not None:
            labels[NAMESPACE_NAME_LABEL] = name
    spec = _child(namespace, "spec", create=True)
    if spec is not None and spec.get("finalizers") is None:
        spec["finalizers"] = ["kubernetes"]
    status = _child(namespace, "status", create=True)
    if status is not None:
        _setdefault(status, "phase", "Active")


def _node(node: Obj) -> None:
    _child(node, "spec", create=True)
    status = _child(node, "status")
    if status is None:
        return
    _resource_list(status, "capacity")
    _resource_list(status, "allocatable")
    capacity = status.get("capacity")
    if status.get("allocatable") is None and isinstance(capacity, dict):
        status["allocatable"] = dict(capacity)


def _secret(secret: Obj) -> None:
    _setdefault(secret, "type", "Opaque")
    string_data = secret.get("stringData")
    if not isinstance(string_data, dict):
        return
    data = secret.get("data")
    if data is None:
        data = secret["data"] = {}
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in string_data.values()):
        return  # leave it for validation to report
    for key, text in string_data.items():
        data[key] = base64.b64encode(text.encode()).decode()
    del secret["stringData"]


def _limit_range(limit_range: Obj) -> None:
    spec = _child(limit_range, "spec")
    if spec is None:
        return
    for item in _dicts(spec, "limits"):
        for key in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            _resource_list(item, key)
        if item.get("type") == "Container":
            _limit_range_container_defaults(item)


def _limit_range_container_defaults(item: Obj) -> None:
    """SetDefaults_LimitRangeItem: default limit <- max; default request <- default, then min.
    Maps left empty are dropped again: upstream omits empty maps when it serialises."""
    defaults = _child(item, "default", create=True)
    requests = _child(item, "defaultRequest", create=True)
    if defaults is None or requests is None:
        return
    for source, target in (("max", defaults), ("default", requests), ("min", requests)):
        values = item.get(source)
        if isinstance(values, dict):
            for name, q in values.items():
                target.setdefault(name, q)
    for key in ("default", "defaultRequest"):
        if item.get(key) == {}:
            del item[key]


def _resource_quota(quota: Obj) -> None:
    _resource_list(_child(quota, "spec"), "hard")
    status = _child(quota, "status")
    _resource_list(status, "hard")
    _resource_list(status, "used")


def _persistent_volume(pv: Obj) -> None:
    """SetDefaults_PersistentVolume (+ the hostPath type default and the capacity list)."""
    spec = _child(pv, "spec", create=True)
    if spec is not None:
        _setdefault(spec, "persistentVolumeReclaimPolicy", "Retain")
        _setdefault(spec, "volumeMode", "Filesystem")
        _resource_list(spec, "capacity")
        host_path = _child(spec, "hostPath")
        if host_path is not None and host_path.get("type") is None:
            host_path["type"] = ""
    status = _child(pv, "status", create=True)
    if status is not None:
        _setdefault(status, "phase", "Pending")


def _persistent_volume_claim(pvc: Obj) -> None:
    """SetDefaults_PersistentVolumeClaim and _PersistentVolumeClaimSpec."""
    spec = _child(pvc, "spec", create=True)
    if spec is not None:
        _setdefault(spec, "volumeMode", "Filesystem")
        resources = _child(spec, "resources")
        _resource_list(resources, "requests")
        _resource_list(resources, "limits")
    status = _child(pvc, "status", create=True)
    if status is not None:
        _setdefault(status, "phase", "Pending")


# apps/v1 DaemonSet and StatefulSet (pkg/apis/apps/v1/defaults.go SetDefaults_DaemonSet,
# SetDefaults_StatefulSet; the claim templates get the PersistentVolumeClaim defaults through
# the generated defaulter, which is why `kubectl get sts -o yaml` shows their
# `status: {phase: Pending}`).


def _daemon_set(ds: Obj) -> None:
    spec = _child(ds, "spec", create=True)
    if spec is None:
        return
    strategy = _child(spec, "updateStrategy", create=True)
    if strategy is not None:
        _setdefault(strategy, "type", "RollingUpdate")
        if strategy.get("type") == "RollingUpdate":
            rolling = _child(strategy, "rollingUpdate", create=True)
            if rolling is not None:
                if rolling.get("maxUnavailable") is None:
                    rolling["maxUnavailable"] = 1
                if rolling.get("maxSurge") is None:
                    rolling["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    _template(spec)


def _stateful_set(sts: Obj) -> None:
    spec = _child(sts, "spec", create=True)
    if spec is None:
        return
    _setdefault(spec, "podManagementPolicy", "OrderedReady")
    strategy = _child(spec, "updateStrategy", create=True)
    if strategy is not None:
        _setdefault(strategy, "type", "RollingUpdate")
        if strategy.get("type") == "RollingUpdate":
            rolling = _child(strategy, "rollingUpdate", create=True)
            if rolling is not None and rolling.get("partition") is None:
                rolling["partition"] = 0
    retention = _child(spec, "persistentVolumeClaimRetentionPolicy", create=True)
    if retention is not None:
        _setdefault(retention, "whenDeleted", "Retain")
        _setdefault(retention, "whenScaled", "Retain")
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    for claim in _dicts(spec, "volumeClaimTemplates"):
        _persistent_volume_claim(claim)
    _template(spec)


def _priority_class(pc: Obj) -> None:
    """scheduling/v1 SetDefaults_PriorityClass: a class preempts lower priorities."""
    if pc.get("preemptionPolicy") is None:
        pc["preemptionPolicy"] = PREEMPT_LOWER_PRIORITY


def _endpoint_slice(slice_: Obj) -> None:
    """discovery/v1 SetDefaults_EndpointPort: a port's name defaults to "" and its protocol
    to TCP."""
    for port in _dicts(slice_, "ports"):
        _setdefault(port, "name", "")
        _setdefault(port, "protocol", "TCP")


#: kind -> (its API group, its defaulter)
_DEFAULTERS: dict[str, tuple[str, Callable[[Obj], None]]] = {
    "RoleBinding": ("rbac.authorization.k8s.io", default_rbac_binding),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io", default_rbac_binding),
    "Pod": ("", _pod),
    "PodTemplate": ("", _pod_template),
    "ReplicationController": ("", _replication_controller),
    "ReplicaSet": ("apps", _replica_set),
    "Deployment": ("apps", _deployment),
    "Job": ("batch", _job),
    "CronJob": ("batch", _cron_job),
    "HorizontalPodAutoscaler": ("autoscaling", hpa.set_defaults),
    "Service": ("", _service),
    "Endpoints": ("", _endpoints),
    "Namespace": ("", _namespace),
    "Node": ("", _node),
    "Secret": ("", _secret),
    "LimitRange": ("", _limit_range),
    "ResourceQuota": ("", _resource_quota),
    "PersistentVolume": ("", _persistent_volume),
    "PersistentVolumeClaim": ("", _persistent_volume_claim),
    "PriorityClass": ("scheduling.k8s.io", _priority_class),
    "DaemonSet": ("apps", _daemon_set),
    "StatefulSet": ("apps", _stateful_set),
    "ValidatingAdmissionPolicy": ("admissionregistration.k8s.io", default_policy),
    "ValidatingAdmissionPolicyBinding": ("admissionregistration.k8s.io", default_binding),
    "EndpointSlice": ("discovery.k8s.io", _endpoint_slice),
    "StorageClass": ("storage.k8s.io", set_defaults_storage_class),
    "CSIDriver": ("storage.k8s.io", set_defaults_csi_driver),
}
# networking.k8s.io and flowcontrol.apiserver.k8s.io (issue 19): their modules own the defaults
_DEFAULTERS.update(networking.DEFAULTERS)
_DEFAULTERS.update(flowcontrol.DEFAULTERS)


# ---------------------------------------------------------------------------------------------
# Registry helper: the status a new pod starts with.


def pod_initial_status(pod: Obj) -> Obj:
    """`{"phase": "Pending", "qosClass": ...}` as upstream's pod strategy PrepareForCreate sets."""
    return {"phase": "Pending", "qosClass": qos_class(pod)}


def qos_class(pod: Obj) -> str:
    """Upstream qos.GetPodQOS over containers and init containers (cpu and memory only)."""
    spec = pod.get("spec") if isinstance(pod, dict) else None
    containers: list[Obj] = []
    if isinstance(spec, dict):
        containers = _dicts(spec, "containers") + _dicts(spec, "initContainers")
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = True
    for container in containers:
        resources = _child(container, "resources") or {}
        for name, raw in _positive(resources.get("requests")):
            requests[name] = requests.get(name, 0) + raw
        found = set()
        for name, raw in _positive(resources.get("limits")):
            found.add(name)
            limits[name] = limits.get(name, 0) + raw
        if found != {"cpu", "memory"}:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(name) == amount for name, amount in requests.items()):
        if len(requests) == len(limits):
            return "Guaranteed"
    return "Burstable"


def _positive(resources: Any) -> list[tuple[str, Any]]:
    if not isinstance(resources, dict):
        return []
    out = []
    for name in ("cpu", "memory"):
        raw = resources.get(name)
        if raw is None:
            continue
        try:
            amount = quantity.parse_quantity(raw)
        except ValueError:
            continue
        if amount > 0:
            out.append((name, amount))
    return out
