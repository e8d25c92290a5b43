"""Which resource a request is about, and the URL that names it.

Kubernetes v1.0 piece: pkg/client's per-resource clients (`c.Pods(ns)`, `c.Nodes()`), which
each knew their path under /api/v1. Components name resources with these constants; the
client never imports the registry (components reach the cluster only through the API).
"""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import quote


class Resource(NamedTuple):
    group: str
    version: str
    plural: str
    namespaced: bool
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None,
             subresource: str | None = None) -> str:
        """`/api/v1/namespaces/default/pods/web/status` and friends. A namespaced resource
        without a namespace is the all-namespaces collection."""
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        parts = [root]
        if self.namespaced and namespace:
            parts.append(f"/namespaces/{quote(namespace, safe='')}")
        parts.append(f"/{self.plural}")
        if name:
            parts.append(f"/{quote(name, safe='')}")
            if subresource:
                parts.append(f"/{subresource}")
        return "".join(parts)


PODS = Resource("", "v1", "pods", True, "Pod")
NODES = Resource("", "v1", "nodes", False, "Node")
NAMESPACES = Resource("", "v1", "namespaces", False, "Namespace")
SERVICES = Resource("", "v1", "services", True, "Service")
ENDPOINTS = Resource("", "v1", "endpoints", True, "Endpoints")
EVENTS = Resource("", "v1", "events", True, "Event")
REPLICATION_CONTROLLERS = Resource("", "v1", "replicationcontrollers", True,
                                   "ReplicationController")
CONFIGMAPS = Resource("", "v1", "configmaps", True, "ConfigMap")
SECRETS = Resource("", "v1", "secrets", True, "Secret")
SERVICEACCOUNTS = Resource("", "v1", "serviceaccounts", True, "ServiceAccount")
RESOURCE_QUOTAS = Resource("", "v1", "resourcequotas", True, "ResourceQuota")
LIMIT_RANGES = Resource("", "v1", "limitranges", True, "LimitRange")
DEPLOYMENTS = Resource("apps", "v1", "deployments", True, "Deployment")
REPLICASETS = Resource("apps", "v1", "replicasets", True, "ReplicaSet")
DAEMONSETS = Resource("apps", "v1", "daemonsets", True, "DaemonSet")
STATEFULSETS = Resource("apps", "v1", "statefulsets", True, "StatefulSet")
CONTROLLER_REVISIONS = Resource("apps", "v1", "controllerrevisions", True, "ControllerRevision")
JOBS = Resource("batch", "v1", "jobs", True, "Job")
CRONJOBS = Resource("batch", "v1", "cronjobs", True, "CronJob")
POD_DISRUPTION_BUDGETS = Resource("policy", "v1", "poddisruptionbudgets", True,
                                  "PodDisruptionBudget")
ENDPOINT_SLICES = Resource("discovery.k8s.io", "v1", "endpointslices", True, "EndpointSlice")
HORIZONTALPODAUTOSCALERS = Resource("autoscaling", "v2", "horizontalpodautoscalers", True,
                                    "HorizontalPodAutoscaler")
POD_METRICS = Resource("metrics.k8s.io", "v1beta1", "pods", True, "PodMetrics")
COMPONENTSTATUSES = Resource("", "v1", "componentstatuses", False, "ComponentStatus")
PERSISTENT_VOLUMES = Resource("", "v1", "persistentvolumes", False, "PersistentVolume")
PERSISTENT_VOLUME_CLAIMS = Resource("", "v1", "persistentvolumeclaims", True,
                                    "PersistentVolumeClaim")
CERTIFICATE_SIGNING_REQUESTS = Resource("certificates.k8s.io", "v1", "certificatesigningrequests",
                                        False, "CertificateSigningRequest")
#: authorization.k8s.io/v1 SubjectAccessReview: a create that stores nothing and answers
#: whether spec.user may do spec.resourceAttributes (the csrapproving controller asks it)
SUBJECT_ACCESS_REVIEWS = Resource("authorization.k8s.io", "v1", "subjectaccessreviews", False,
                                  "SubjectAccessReview")
# networking.k8s.io/v1 (issue 19): the simulated ingress controller's informers
INGRESSES = Resource("networking.k8s.io", "v1", "ingresses", True, "Ingress")
INGRESS_CLASSES = Resource("networking.k8s.io", "v1", "ingressclasses", False, "IngressClass")
#: storage.k8s.io/v1 (the provisioner, the attach/detach controller, kubelets' CSINodes)
STORAGE_CLASSES = Resource("storage.k8s.io", "v1", "storageclasses", False, "StorageClass")
CSI_DRIVERS = Resource("storage.k8s.io", "v1", "csidrivers", False, "CSIDriver")
CSI_NODES = Resource("storage.k8s.io", "v1", "csinodes", False, "CSINode")
VOLUME_ATTACHMENTS = Resource("storage.k8s.io", "v1", "volumeattachments", False,
                              "VolumeAttachment")
CSI_STORAGE_CAPACITIES = Resource("storage.k8s.io", "v1", "csistoragecapacities", True,
                                  "CSIStorageCapacity")
