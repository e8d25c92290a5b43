"""Schema tables for core/v1 Node, Namespace, Event, Secret, ConfigMap, ServiceAccount,
LimitRange, ResourceQuota, ComponentStatus and Binding (see openapi_schemas.py for the
notation). Kubernetes piece: k8s.io/api/core/v1 types.go doc comments, shortened.
"""

from __future__ import annotations

RAW: dict = {}
KINDS = frozenset({
    "core.Node", "core.Namespace", "core.Event", "core.Secret", "core.ConfigMap",
    "core.ServiceAccount", "core.LimitRange", "core.ResourceQuota", "core.ComponentStatus",
    "core.Binding",
})
UNLISTED = frozenset({"core.Binding"})

_LIMITS = "{Quantity"

TYPES = {
    # ------------------------------------------------------------------ nodes
    "core.Node": ("Node is a worker node in Kubernetes. Each node will have a unique identifier "
                  "in the cache (i.e. in etcd).", {
        "spec": ("core.NodeSpec", "Spec defines the behavior of a node."),
        "status": ("core.NodeStatus", "Most recently observed status of the node. Read-only."),
    }),
    "core.NodeSpec": ("NodeSpec describes the attributes that a node is created with.", {
        "podCIDR": ("string", "PodCIDR represents the pod IP range assigned to the node."),
        "podCIDRs": ("[string", "podCIDRs represents the IP ranges assigned to the node for "
                     "usage by Pods on that node.", None, "merge"),
        "providerID": ("string", "ID of the node assigned by the cloud provider."),
        "unschedulable": ("boolean", "Unschedulable controls node schedulability of new pods. "
                          "By default, node is schedulable."),
        "taints": ("[core.Taint", "If specified, the node's taints."),
        "externalID": ("string", "Deprecated. Not all kubelets will set this field."),
    }),
    "core.Taint": ("The node this Taint is attached to has the \"effect\" on any pod that does "
                   "not tolerate the Taint.", {
        "key": ("string", "Required. The taint key to be applied to a node."),
        "value": ("string", "The taint value corresponding to the taint key."),
        "effect": ("string", "Required. The effect of the taint on pods that do not tolerate "
                   "the taint: NoSchedule, PreferNoSchedule and NoExecute."),
        "timeAdded": ("Time", "TimeAdded represents the time at which the taint was added "
                      "(NoExecute only)."),
    }, ("key", "effect")),
    "core.NodeStatus": ("NodeStatus is information about the current status of a node.", {
        "capacity": (_LIMITS, "Capacity represents the total resources of a node."),
        "allocatable": (_LIMITS, "Allocatable represents the resources of a node that are "
                        "available for scheduling. Defaults to Capacity."),
        "phase": ("string", "NodePhase is the recently observed lifecycle phase of the node. "
                  "Deprecated."),
        "conditions": ("[core.NodeCondition", "Conditions is an array of current observed "
                       "node conditions.", "type"),
        "addresses": ("[core.NodeAddress", "List of addresses reachable to the node.", "type"),
        "daemonEndpoints": ("core.NodeDaemonEndpoints", "Endpoints of daemons running on the "
                            "Node."),
        "nodeInfo": ("core.NodeSystemInfo", "Set of ids/uuids to uniquely identify the node."),
        "images": ("[core.ContainerImage", "List of container images on this node"),
        "volumesInUse": ("[string", "List of attachable volumes in use (mounted) by the "
                         "node."),
    }),
    "core.NodeCondition": ("NodeCondition contains condition information for a node.", {
        "type": ("string", "Type of node condition."),
        "status": ("string", "Status of the condition, one of True, False, Unknown."),
        "lastHeartbeatTime": ("Time", "Last time we got an update on a given condition."),
        "lastTransitionTime": ("Time", "Last time the condition transit from one status to "
                               "another."),
        "reason": ("string", "(brief) reason for the condition's last transition."),
        "message": ("string", "Human readable message indicating details about last "
                    "transition."),
    }, ("type", "status")),
    "core.NodeAddress": ("NodeAddress contains information for the node's address.", {
        "type": ("string", "Node address type, one of Hostname, ExternalIP or InternalIP."),
        "address": ("string", "The node address."),
    }, ("type", "address")),
    "core.NodeDaemonEndpoints": ("NodeDaemonEndpoints lists ports opened by daemons running on "
                                 "the Node.", {
        "kubeletEndpoint": ("core.DaemonEndpoint", "Endpoint on which Kubelet is listening."),
    }),
    "core.DaemonEndpoint": ("DaemonEndpoint contains information about a single Daemon "
                            "endpoint.", {
        "Port": ("int32", "Port number of the given endpoint."),
    }, ("Port",)),
    "core.NodeSystemInfo": ("NodeSystemInfo is a set of ids/uuids to uniquely identify the "
                            "node.", {
        "machineID": ("string", "MachineID reported by the node."),
        "systemUUID": ("string", "SystemUUID reported by the node."),
        "bootID": ("string", "Boot ID reported by the node."),
        "kernelVersion": ("string", "Kernel Version reported by the node from 'uname -r'."),
        "osImage": ("string", "OS Image reported by the node from /etc/os-release."),
        "containerRuntimeVersion": ("string", "ContainerRuntime Version reported by the node "
                                    "through runtime remote API (e.g. containerd://1.4.2)."),
        "kubeletVersion": ("string", "Kubelet Version reported by the node."),
        "kubeProxyVersion": ("string", "Deprecated: KubeProxy Version reported by the node."),
        "operatingSystem": ("string", "The Operating System reported by the node"),
        "architecture": ("string", "The Architecture reported by the node"),
    }, ("machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
        "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion", "operatingSystem",
        "architecture")),
    "core.ContainerImage": ("Describe a container image", {
        "names": ("[string", "Names by which this image is known."),
        "sizeBytes": ("int64", "The size of the image in bytes."),
    }),
    # ------------------------------------------------------------------ namespaces
    "core.Namespace": ("Namespace provides a scope for Names. Use of multiple namespaces is "
                       "optional.", {
        "spec": ("core.NamespaceSpec", "Spec defines the behavior of the Namespace."),
        "status": ("core.NamespaceStatus", "Status describes the current status of a "
                   "Namespace."),
    }),
    "core.NamespaceSpec": ("NamespaceSpec describes the attributes on a Namespace.", {
        "finalizers": ("[string", "Finalizers is an opaque list of values that must be empty "
                       "to permanently remove object from storage."),
    }),
    "core.NamespaceStatus": ("NamespaceStatus is information about the current status of a "
                             "Namespace.", {
        "phase": ("string", "Phase is the current lifecycle phase of the namespace: Active or "
                  "Terminating."),
        "conditions": ("[core.NamespaceCondition", "Represents the latest available "
                       "observations of a namespace's current state.", "type"),
    }),
    "core.NamespaceCondition": ("NamespaceCondition contains details about state of "
                                "namespace.", {
        "type": ("string", "Type of namespace controller condition."),
        "status": ("string", "Status of the condition, one of True, False, Unknown."),
        "lastTransitionTime": ("Time", "Last time the condition transitioned from one status "
                               "to another."),
        "reason": ("string", "Unique, one-word, CamelCase reason for the condition's last "
                   "transition."),
        "message": ("string", "Human-readable message indicating details about last "
                    "transition."),
    }, ("type", "status")),
    # ------------------------------------------------------------------ events
    "core.Event": ("Event is a report of an event somewhere in the cluster.", {
        "involvedObject": ("core.ObjectReference", "The object that this event is about."),
        "reason": ("string", "This should be a short, machine understandable string that "
                   "gives the reason for the transition into the object's current status."),
        "message": ("string", "A human-readable description of the status of this "
                    "operation."),
        "source": ("core.EventSource", "The component reporting this event."),
        "firstTimestamp": ("Time", "The time at which the event was first recorded."),
        "lastTimestamp": ("Time", "The time at which the most recent occurrence of this event "
                          "was recorded."),
        "count": ("int32", "The number of times this event has occurred."),
        "type": ("string", "Type of this event (Normal, Warning), new types could be added in "
                 "the future"),
        "eventTime": ("MicroTime", "Time when this Event was first observed."),
        "series": ("core.EventSeries", "Data about the Event series this event represents or "
                   "nil if it's a singleton Event."),
        "action": ("string", "What action was taken/failed regarding to the Regarding "
                   "object."),
        "related": ("core.ObjectReference", "Optional secondary object for more complex "
                    "actions."),
        "reportingComponent": ("string", "Name of the controller that emitted this Event, "
                               "e.g. `kubernetes.io/kubelet`."),
        "reportingInstance": ("string", "ID of the controller instance, e.g. "
                              "`kubelet-xyzf`."),
    }, ("metadata", "involvedObject")),
    "core.EventSource": ("EventSource contains information for an event.", {
        "component": ("string", "Component from which the event is generated."),
        "host": ("string", "Node name on which the event is generated."),
    }),
    "core.EventSeries": ("EventSeries contain information on series of events, i.e. thing that "
                         "was/is happening continuously for some time.", {
        "count": ("int32", "Number of occurrences in this series up to the last heartbeat "
                  "time"),
        "lastObservedTime": ("MicroTime", "Time of the last occurrence observed"),
    }),
    # ------------------------------------------------------------------ config and identity
    "core.Secret": ("Secret holds secret data of a certain type. The total bytes of the values "
                    "in the Data field must be less than MaxSecretSize bytes.", {
        "data": ("{byte", "Data contains the secret data. Each key must consist of "
                 "alphanumeric characters, '-', '_' or '.'. Values are base64 encoded."),
        "stringData": ("{string", "stringData allows specifying non-binary secret data in "
                       "string form. It is provided as a write-only input field."),
        "type": ("string", "Used to facilitate programmatic handling of secret data."),
        "immutable": ("boolean", "Immutable, if set to true, ensures that data stored in the "
                      "Secret cannot be updated (only object metadata can be modified)."),
    }),
    "core.ConfigMap": ("ConfigMap holds configuration data for pods to consume.", {
        "data": ("{string", "Data contains the configuration data."),
        "binaryData": ("{byte", "BinaryData contains the binary data."),
        "immutable": ("boolean", "Immutable, if set to true, ensures that data stored in the "
                      "ConfigMap cannot be updated (only object metadata can be modified)."),
    }),
    "core.ServiceAccount": ("ServiceAccount binds together: a name, understood by users, and "
                            "perhaps by peripheral systems, for an identity; a principal that "
                            "can be authenticated and authorized; a set of secrets.", {
        "secrets": ("[core.ObjectReference", "Secrets is a list of the secrets in the same "
                    "namespace that pods running using this ServiceAccount are allowed to use.",
                    "name"),
        "imagePullSecrets": ("[core.LocalObjectReference", "ImagePullSecrets is a list of "
                             "references to secrets in the same namespace to use for pulling "
                             "any images in pods that reference this ServiceAccount."),
        "automountServiceAccountToken": ("boolean", "AutomountServiceAccountToken indicates "
                                         "whether pods running as this service account should "
                                         "have an API token automatically mounted."),
    }),
    # ------------------------------------------------------------------ policy
    "core.LimitRange": ("LimitRange sets resource usage limits for each kind of resource in a "
                        "Namespace.", {
        "spec": ("core.LimitRangeSpec", "Spec defines the limits enforced."),
    }),
    "core.LimitRangeSpec": ("LimitRangeSpec defines a min/max usage limit for resources that "
                            "match on kind.", {
        "limits": ("[core.LimitRangeItem", "Limits is the list of LimitRangeItem objects that "
                   "are enforced."),
    }, ("limits",)),
    "core.LimitRangeItem": ("LimitRangeItem defines a min/max usage limit for any resource "
                            "that matches on kind.", {
        "type": ("string", "Type of resource that this limit applies to: Pod, Container or "
                 "PersistentVolumeClaim."),
        "max": (_LIMITS, "Max usage constraints on this kind by resource name."),
        "min": (_LIMITS, "Min usage constraints on this kind by resource name."),
        "default": (_LIMITS, "Default resource requirement limit value by resource name if "
                    "resource limit is omitted."),
        "defaultRequest": (_LIMITS, "DefaultRequest is the default resource requirement "
                           "request value by resource name if resource request is omitted."),
        "maxLimitRequestRatio": (_LIMITS, "MaxLimitRequestRatio if specified, the named "
                                 "resource must have a request and limit that are both "
                                 "non-zero where limit divided by request is less than or "
                                 "equal to the enumerated value."),
    }, ("type",)),
    "core.ResourceQuota": ("ResourceQuota sets aggregate quota restrictions enforced per "
                           "namespace", {
        "spec": ("core.ResourceQuotaSpec", "Spec defines the desired quota."),
        "status": ("core.ResourceQuotaStatus", "Status defines the actual enforced quota and "
                   "its current usage."),
    }),
    "core.ResourceQuotaSpec": ("ResourceQuotaSpec defines the desired hard limits to enforce "
                               "for Quota.", {
        "hard": (_LIMITS, "hard is the set of desired hard limits for each named resource."),
        "scopes": ("[string", "A collection of filters that must match each object tracked by "
                   "a quota."),
        "scopeSelector": ("core.ScopeSelector", "scopeSelector is also a collection of filters "
                          "like scopes that must match each object tracked by a quota."),
    }),
    "core.ScopeSelector": ("A scope selector represents the AND of the selectors represented "
                           "by the scoped-resource selector requirements.", {
        "matchExpressions": ("[core.ScopedResourceSelectorRequirement", "A list of scope "
                             "selector requirements by scope of the resources."),
    }),
    "core.ScopedResourceSelectorRequirement": ("A scoped-resource selector requirement is a "
                                               "selector that contains values, a scope name, "
                                               "and an operator.", {
        "scopeName": ("string", "The name of the scope that the selector applies to."),
        "operator": ("string", "Represents a scope's relationship to a set of values: In, "
                     "NotIn, Exists, DoesNotExist."),
        "values": ("[string", "An array of string values."),
    }, ("scopeName", "operator")),
    "core.ResourceQuotaStatus": ("ResourceQuotaStatus defines the enforced hard limits and "
                                 "observed use.", {
        "hard": (_LIMITS, "Hard is the set of enforced hard limits for each named resource."),
        "used": (_LIMITS, "Used is the current observed total usage of the resource in the "
                 "namespace."),
    }),
    "core.ComponentStatus": ("ComponentStatus (and ComponentStatusList) holds the cluster "
                             "validation info. Deprecated: This API is deprecated in v1.19+", {
        "conditions": ("[core.ComponentCondition", "List of component conditions observed",
                       "type"),
    }),
    "core.ComponentCondition": ("Information about the condition of a component.", {
        "type": ("string", "Type of condition for a component. Valid value: \"Healthy\""),
        "status": ("string", "Status of the condition for a component. Valid values for "
                   "\"Healthy\": \"True\", \"False\", or \"Unknown\"."),
        "message": ("string", "Message about the condition for a component."),
        "error": ("string", "Condition error code for a component."),
    }, ("type", "status")),
    "core.Binding": ("Binding ties one object to another; for example, a pod is bound to a node "
                     "by a scheduler.", {
        "target": ("core.ObjectReference", "The target object that you want to bind to the "
                   "standard object."),
    }, ("target",)),
}
