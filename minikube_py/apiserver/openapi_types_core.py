"""Schema tables for core/v1 pod status, affinity, ReplicationController, Service and
Endpoints (see openapi_schemas.py for the notation). Kubernetes piece: k8s.io/api/core/v1
types.go doc comments, shortened.
"""

from __future__ import annotations

RAW: dict = {}
KINDS = frozenset({"core.ReplicationController", "core.Service", "core.Endpoints"})
UNLISTED: frozenset = frozenset()

_AFFINITY_TERMS = ("If the affinity requirements specified by this field are not met at "
                   "scheduling time, the pod will not be scheduled onto the node.")
_PREFERRED = ("The scheduler will prefer to schedule pods to nodes that satisfy the affinity "
              "expressions specified by this field, but it may choose a node that violates "
              "one or more of the expressions.")

TYPES = {
    # ------------------------------------------------------------------ affinity
    "core.Affinity": ("Affinity is a group of affinity scheduling rules.", {
        "nodeAffinity": ("core.NodeAffinity", "Describes node affinity scheduling rules for "
                         "the pod."),
        "podAffinity": ("core.PodAffinity", "Describes pod affinity scheduling rules (e.g. "
                        "co-locate this pod in the same node, zone, etc. as some other "
                        "pod(s))."),
        "podAntiAffinity": ("core.PodAntiAffinity", "Describes pod anti-affinity scheduling "
                            "rules (e.g. avoid putting this pod in the same node, zone, etc. as "
                            "some other pod(s))."),
    }),
    "core.NodeAffinity": ("Node affinity is a group of node affinity scheduling rules.", {
        "requiredDuringSchedulingIgnoredDuringExecution": ("core.NodeSelector",
                                                           _AFFINITY_TERMS),
        "preferredDuringSchedulingIgnoredDuringExecution": ("[core.PreferredSchedulingTerm",
                                                            _PREFERRED),
    }),
    "core.NodeSelector": ("A node selector represents the union of the results of one or more "
                          "label queries over a set of nodes.", {
        "nodeSelectorTerms": ("[core.NodeSelectorTerm", "Required. A list of node selector "
                              "terms. The terms are ORed."),
    }, ("nodeSelectorTerms",)),
    "core.NodeSelectorTerm": ("A null or empty node selector term matches no objects. The "
                              "requirements of them are ANDed.", {
        "matchExpressions": ("[core.NodeSelectorRequirement", "A list of node selector "
                             "requirements by node's labels."),
        "matchFields": ("[core.NodeSelectorRequirement", "A list of node selector requirements "
                        "by node's fields."),
    }),
    "core.NodeSelectorRequirement": ("A node selector requirement is a selector that contains "
                                     "values, a key, and an operator.", {
        "key": ("string", "The label key that the selector applies to."),
        "operator": ("string", "Represents a key's relationship to a set of values: In, NotIn, "
                     "Exists, DoesNotExist. Gt, and Lt."),
        "values": ("[string", "An array of string values."),
    }, ("key", "operator")),
    "core.PreferredSchedulingTerm": ("An empty preferred scheduling term matches all objects "
                                     "with implicit weight 0.", {
        "weight": ("int32", "Weight associated with matching the corresponding "
                   "nodeSelectorTerm, in the range 1-100."),
        "preference": ("core.NodeSelectorTerm", "A node selector term, associated with the "
                       "corresponding weight."),
    }, ("weight", "preference")),
    "core.PodAffinity": ("Pod affinity is a group of inter pod affinity scheduling rules.", {
        "requiredDuringSchedulingIgnoredDuringExecution": ("[core.PodAffinityTerm",
                                                           _AFFINITY_TERMS),
        "preferredDuringSchedulingIgnoredDuringExecution": ("[core.WeightedPodAffinityTerm",
                                                            _PREFERRED),
    }),
    "core.PodAntiAffinity": ("Pod anti affinity is a group of inter pod anti affinity "
                             "scheduling rules.", {
        "requiredDuringSchedulingIgnoredDuringExecution": ("[core.PodAffinityTerm",
                                                           _AFFINITY_TERMS),
        "preferredDuringSchedulingIgnoredDuringExecution": ("[core.WeightedPodAffinityTerm",
                                                            _PREFERRED),
    }),
    "core.PodAffinityTerm": ("Defines a set of pods that this pod should be co-located "
                             "(affinity) or not co-located (anti-affinity) with.", {
        "labelSelector": ("LabelSelector", "A label query over a set of resources, in this case "
                          "pods."),
        "namespaces": ("[string", "namespaces specifies a static list of namespace names that "
                       "the term applies to."),
        "topologyKey": ("string", "This pod should be co-located (affinity) or not co-located "
                        "(anti-affinity) with the pods matching the labelSelector in the "
                        "specified namespaces."),
        "namespaceSelector": ("LabelSelector", "A label query over the set of namespaces that "
                              "the term applies to."),
        "matchLabelKeys": ("[string", "MatchLabelKeys is a set of pod label keys to select "
                           "which pods will be taken into consideration."),
        "mismatchLabelKeys": ("[string", "MismatchLabelKeys is a set of pod label keys to "
                              "select which pods will be taken into consideration."),
    }, ("topologyKey",)),
    "core.WeightedPodAffinityTerm": ("The weights of all of the matched "
                                     "WeightedPodAffinityTerm fields are added per-node to "
                                     "find the most preferred node(s)", {
        "weight": ("int32", "weight associated with matching the corresponding "
                   "podAffinityTerm, in the range 1-100."),
        "podAffinityTerm": ("core.PodAffinityTerm", "Required. A pod affinity term, associated "
                            "with the corresponding weight."),
    }, ("weight", "podAffinityTerm")),
    # ------------------------------------------------------------------ pod status
    "core.PodStatus": ("PodStatus represents information about the status of a pod.", {
        "phase": ("string", "The phase of a Pod is a simple, high-level summary of where the "
                  "Pod is in its lifecycle: Pending, Running, Succeeded, Failed or Unknown."),
        "conditions": ("[core.PodCondition", "Current service state of pod.", "type"),
        "message": ("string", "A human readable message indicating details about why the pod "
                    "is in this condition."),
        "reason": ("string", "A brief CamelCase message indicating details about why the pod is "
                   "in this state. e.g. 'Evicted'"),
        "nominatedNodeName": ("string", "nominatedNodeName is set only when this pod preempts "
                              "other pods on the node."),
        "hostIP": ("string", "hostIP holds the IP address of the host to which the pod is "
                   "assigned."),
        "hostIPs": ("[core.HostIP", "hostIPs holds the IP addresses allocated to the host.",
                    "ip"),
        "podIP": ("string", "podIP address allocated to the pod. Routable at least within the "
                  "cluster."),
        "podIPs": ("[core.PodIP", "podIPs holds the IP addresses allocated to the pod.", "ip"),
        "startTime": ("Time", "RFC 3339 date and time at which the object was acknowledged by "
                      "the Kubelet."),
        "initContainerStatuses": ("[core.ContainerStatus", "The list has one entry per init "
                                  "container in the manifest."),
        "containerStatuses": ("[core.ContainerStatus", "The list has one entry per container in "
                              "the manifest."),
        "qosClass": ("string", "The Quality of Service (QOS) classification assigned to the "
                     "pod based on resource requirements."),
    }),
    "core.PodCondition": ("PodCondition contains details for the current condition of this "
                          "pod.", {
        "type": ("string", "Type is the type of the condition."),
        "status": ("string", "Status is the status of the condition. Can be True, False, "
                   "Unknown."),
        "lastProbeTime": ("Time", "Last time we probed the condition."),
        "lastTransitionTime": ("Time", "Last time the condition transitioned from one status to "
                               "another."),
        "reason": ("string", "Unique, one-word, CamelCase reason for the condition's last "
                   "transition."),
        "message": ("string", "Human-readable message indicating details about last "
                    "transition."),
    }, ("type", "status")),
    "core.HostIP": ("HostIP represents a single IP address allocated to the host.", {
        "ip": ("string", "IP is the IP address assigned to the host"),
    }),
    "core.PodIP": ("PodIP represents a single IP address allocated to the pod.", {
        "ip": ("string", "IP is the IP address assigned to the pod"),
    }),
    "core.ContainerStatus": ("ContainerStatus contains details for the current status of this "
                             "container.", {
        "name": ("string", "Name is a DNS_LABEL representing the unique name of the container."),
        "state": ("core.ContainerState", "State holds details about the container's current "
                  "condition."),
        "lastState": ("core.ContainerState", "LastTerminationState holds the last termination "
                      "state of the container."),
        "ready": ("boolean", "Ready specifies whether the container is currently passing its "
                  "readiness check."),
        "restartCount": ("int32", "RestartCount holds the number of times the container has "
                         "been restarted."),
        "image": ("string", "Image is the name of container image that the container is "
                  "running."),
        "imageID": ("string", "ImageID is the image ID of the container's image."),
        "containerID": ("string", "ContainerID is the ID of the container in the format "
                        "'<type>://<container_id>'."),
        "started": ("boolean", "Started indicates whether the container has finished its "
                    "postStart lifecycle hook and passed its startup probe."),
    }, ("name", "ready", "restartCount", "image", "imageID")),
    "core.ContainerState": ("ContainerState holds a possible state of container. Only one of "
                            "its members may be specified.", {
        "waiting": ("core.ContainerStateWaiting", "Details about a waiting container"),
        "running": ("core.ContainerStateRunning", "Details about a running container"),
        "terminated": ("core.ContainerStateTerminated", "Details about a terminated "
                       "container"),
    }),
    "core.ContainerStateWaiting": ("ContainerStateWaiting is a waiting state of a "
                                   "container.", {
        "reason": ("string", "(brief) reason the container is not yet running."),
        "message": ("string", "Message regarding why the container is not yet running."),
    }),
    "core.ContainerStateRunning": ("ContainerStateRunning is a running state of a "
                                   "container.", {
        "startedAt": ("Time", "Time at which the container was last (re-)started"),
    }),
    "core.ContainerStateTerminated": ("ContainerStateTerminated is a terminated state of a "
                                      "container.", {
        "exitCode": ("int32", "Exit status from the last termination of the container"),
        "signal": ("int32", "Signal from the last termination of the container"),
        "reason": ("string", "(brief) reason from the last termination of the container"),
        "message": ("string", "Message regarding the last termination of the container"),
        "startedAt": ("Time", "Time at which previous execution of the container started"),
        "finishedAt": ("Time", "Time at which the container last terminated"),
        "containerID": ("string", "Container's ID in the format '<type>://<container_id>'"),
    }, ("exitCode",)),
    # ------------------------------------------------------------------ replication controllers
    "core.ReplicationController": ("ReplicationController represents the configuration of a "
                                   "replication controller.", {
        "spec": ("core.ReplicationControllerSpec", "Spec defines the specification of the "
                 "desired behavior of the replication controller."),
        "status": ("core.ReplicationControllerStatus", "Status is the most recently observed "
                   "status of the replication controller. Read-only."),
    }),
    "core.ReplicationControllerSpec": ("ReplicationControllerSpec is the specification of a "
                                       "replication controller.", {
        "replicas": ("int32", "Replicas is the number of desired replicas. Defaults to 1."),
        "minReadySeconds": ("int32", "Minimum number of seconds for which a newly created pod "
                            "should be ready without any of its container crashing."),
        "selector": ("{string", "Selector is a label query over pods that should match the "
                     "Replicas count."),
        "template": ("core.PodTemplateSpec", "Template is the object that describes the pod "
                     "that will be created if insufficient replicas are detected."),
    }),
    "core.ReplicationControllerStatus": ("ReplicationControllerStatus represents the current "
                                         "status of a replication controller.", {
        "replicas": ("int32", "Replicas is the most recently observed number of replicas."),
        "fullyLabeledReplicas": ("int32", "The number of pods that have labels matching the "
                                 "labels of the pod template of the replication controller."),
        "readyReplicas": ("int32", "The number of ready replicas for this replication "
                          "controller."),
        "availableReplicas": ("int32", "The number of available replicas (ready for at least "
                              "minReadySeconds) for this replication controller."),
        "observedGeneration": ("int64", "ObservedGeneration reflects the generation of the "
                               "most recently observed replication controller."),
        "conditions": ("[core.ReplicationControllerCondition", "Represents the latest "
                       "available observations of a replication controller's current state.",
                       "type"),
    }, ("replicas",)),
    "core.ReplicationControllerCondition": ("ReplicationControllerCondition describes the state "
                                            "of a replication controller at a certain point.", {
        "type": ("string", "Type of replication controller condition."),
        "status": ("string", "Status of the condition, one of True, False, Unknown."),
        "lastTransitionTime": ("Time", "The last time the condition transitioned from one "
                               "status to another."),
        "reason": ("string", "The reason for the condition's last transition."),
        "message": ("string", "A human readable message indicating details about the "
                    "transition."),
    }, ("type", "status")),
    # ------------------------------------------------------------------ services
    "core.Service": ("Service is a named abstraction of software service (for example, mysql) "
                     "consisting of local port (for example 3306) that the proxy listens on, "
                     "and the selector that determines which pods will answer requests sent "
                     "through the proxy.", {
        "spec": ("core.ServiceSpec", "Spec defines the behavior of a service."),
        "status": ("core.ServiceStatus", "Most recently observed status of the service. "
                   "Read-only."),
    }),
    "core.ServiceSpec": ("ServiceSpec describes the attributes that a user creates on a "
                         "service.", {
        "ports": ("[core.ServicePort", "The list of ports that are exposed by this service.",
                  "port"),
        "selector": ("{string", "Route service traffic to pods with label keys and values "
                     "matching this selector."),
        "clusterIP": ("string", "clusterIP is the IP address of the service and is usually "
                      "assigned randomly. \"None\" makes a headless service."),
        "clusterIPs": ("[string", "ClusterIPs is a list of IP addresses assigned to this "
                       "service."),
        "type": ("string", "type determines how the Service is exposed: ClusterIP (default), "
                 "ExternalName, NodePort, and LoadBalancer."),
        "externalIPs": ("[string", "externalIPs is a list of IP addresses for which nodes in "
                        "the cluster will also accept traffic for this service."),
        "sessionAffinity": ("string", "Supports \"ClientIP\" and \"None\". Defaults to "
                            "None."),
        "loadBalancerIP": ("string", "Only applies to Service Type: LoadBalancer. Deprecated."),
        "loadBalancerSourceRanges": ("[string", "If specified, traffic through the "
                                     "cloud-provider load-balancer will be restricted to the "
                                     "specified client IPs."),
        "externalName": ("string", "externalName is the external reference that discovery "
                         "mechanisms will return as an alias for this service (a DNS CNAME)."),
        "externalTrafficPolicy": ("string", "externalTrafficPolicy describes how nodes "
                                  "distribute service traffic they receive on externally-facing "
                                  "addresses: Cluster or Local."),
        "healthCheckNodePort": ("int32", "healthCheckNodePort specifies the healthcheck "
                                "nodePort for the service."),
        "publishNotReadyAddresses": ("boolean", "publishNotReadyAddresses indicates that any "
                                     "agent which deals with endpoints for this Service should "
                                     "disregard any indications of ready/not-ready."),
        "sessionAffinityConfig": ("core.SessionAffinityConfig", "sessionAffinityConfig "
                                  "contains the configurations of session affinity."),
        "ipFamilies": ("[string", "IPFamilies is a list of IP families (e.g. IPv4, IPv6) "
                       "assigned to this service."),
        "ipFamilyPolicy": ("string", "IPFamilyPolicy represents the dual-stack-ness requested "
                           "or required by this Service."),
        "allocateLoadBalancerNodePorts": ("boolean", "Whether NodePorts will be automatically "
                                          "allocated for services with type LoadBalancer."),
        "loadBalancerClass": ("string", "loadBalancerClass is the class of the load balancer "
                              "implementation this Service belongs to."),
        "internalTrafficPolicy": ("string", "InternalTrafficPolicy describes how nodes "
                                  "distribute service traffic they receive on the ClusterIP."),
    }),
    "core.ServicePort": ("ServicePort contains information on service's port.", {
        "name": ("string", "The name of this port within the service. Must be a DNS_LABEL."),
        "protocol": ("string", "The IP protocol for this port. Supports \"TCP\", \"UDP\", and "
                     "\"SCTP\". Default is TCP."),
        "appProtocol": ("string", "The application protocol for this port."),
        "port": ("int32", "The port that will be exposed by this service."),
        "targetPort": ("IntOrString", "Number or name of the port to access on the pods "
                       "targeted by the service. Defaults to the value of 'port'."),
        "nodePort": ("int32", "The port on each node on which this service is exposed when "
                     "type is NodePort or LoadBalancer."),
    }, ("port",)),
    "core.SessionAffinityConfig": ("SessionAffinityConfig represents the configurations of "
                                   "session affinity.", {
        "clientIP": ("core.ClientIPConfig", "clientIP contains the configurations of Client IP "
                     "based session affinity."),
    }),
    "core.ClientIPConfig": ("ClientIPConfig represents the configurations of Client IP based "
                            "session affinity.", {
        "timeoutSeconds": ("int32", "timeoutSeconds specifies the seconds of ClientIP type "
                           "session sticky time. Default value is 10800 (3 hours)."),
    }),
    "core.ServiceStatus": ("ServiceStatus represents the current status of a service.", {
        "loadBalancer": ("core.LoadBalancerStatus", "LoadBalancer contains the current status "
                         "of the load-balancer, if one is present."),
        "conditions": ("[meta.Condition", "Current service state", "type"),
    }),
    "core.LoadBalancerStatus": ("LoadBalancerStatus represents the status of a "
                                "load-balancer.", {
        "ingress": ("[core.LoadBalancerIngress", "Ingress is a list containing ingress points "
                    "for the load-balancer."),
    }),
    "core.LoadBalancerIngress": ("LoadBalancerIngress represents the status of a load-balancer "
                                 "ingress point.", {
        "ip": ("string", "IP is set for load-balancer ingress points that are IP based."),
        "hostname": ("string", "Hostname is set for load-balancer ingress points that are DNS "
                     "based."),
        "ipMode": ("string", "IPMode specifies how the load-balancer IP behaves: VIP or "
                   "Proxy."),
    }),
    # ------------------------------------------------------------------ endpoints
    "core.Endpoints": ("Endpoints is a collection of endpoints that implement the actual "
                       "service.", {
        "subsets": ("[core.EndpointSubset", "The set of all endpoints is the union of all "
                    "subsets."),
    }),
    "core.EndpointSubset": ("EndpointSubset is a group of addresses with a common set of "
                            "ports.", {
        "addresses": ("[core.EndpointAddress", "IP addresses which offer the related ports "
                      "that are marked as ready."),
        "notReadyAddresses": ("[core.EndpointAddress", "IP addresses which offer the related "
                              "ports but are not currently marked as ready."),
        "ports": ("[core.EndpointPort", "Port numbers available on the related IP addresses."),
    }),
    "core.EndpointAddress": ("EndpointAddress is a tuple that describes single IP address.", {
        "ip": ("string", "The IP of this endpoint."),
        "hostname": ("string", "The Hostname of this endpoint"),
        "nodeName": ("string", "Optional: Node hosting this endpoint."),
        "targetRef": ("core.ObjectReference", "Reference to object providing the endpoint."),
    }, ("ip",)),
    "core.EndpointPort": ("EndpointPort is a tuple that describes a single port.", {
        "name": ("string", "The name of this port. This must match the 'name' field in the "
                 "corresponding ServicePort."),
        "port": ("int32", "The port number of the endpoint."),
        "protocol": ("string", "The IP protocol for this port. Default is TCP."),
        "appProtocol": ("string", "The application protocol for this port."),
    }, ("port",)),
    "core.ObjectReference": ("ObjectReference contains enough information to let you inspect "
                             "or modify the referred object.", {
        "kind": ("string", "Kind of the referent."),
        "namespace": ("string", "Namespace of the referent."),
        "name": ("string", "Name of the referent."),
        "uid": ("string", "UID of the referent."),
        "apiVersion": ("string", "API version of the referent."),
        "resourceVersion": ("string", "Specific resourceVersion to which this reference is "
                            "made, if any."),
        "fieldPath": ("string", "If referring to a piece of an object instead of an entire "
                      "object, this string should contain a valid JSON/Go field access "
                      "statement, such as desiredState.manifest.containers[2]."),
    }),
}
