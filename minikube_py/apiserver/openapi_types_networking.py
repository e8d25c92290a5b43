"""Schema tables for networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy (see
openapi_schemas.py for the notation). Kubernetes piece: k8s.io/api/networking/v1 types.go doc
comments, shortened.

What kubectl needs from them: `kubectl explain ingress.spec.rules` and friends with upstream's
words. Every list of these types is atomic upstream (no merge keys), so client-side apply
replaces them whole; fields the table leaves out (status's port statuses, IngressClass
parameters' details) are completed from the protobuf description.
"""

from __future__ import annotations

RAW: dict = {}
KINDS = frozenset({"networking.Ingress", "networking.IngressClass", "networking.NetworkPolicy"})
UNLISTED: frozenset = frozenset()

TYPES = {
    "networking.Ingress": (("Ingress is a collection of rules that allow inbound connections to "
                            "reach the endpoints defined by a backend. An Ingress can be "
                            "configured to give services externally-reachable urls, load "
                            "balance traffic, terminate SSL, offer name based virtual hosting "
                            "etc."), {
        "spec": ("networking.IngressSpec", "spec is the desired state of the Ingress."),
        "status": ("networking.IngressStatus", "status is the current state of the Ingress."),
    }),
    "networking.IngressSpec": ("IngressSpec describes the Ingress the user wishes to exist.", {
        "ingressClassName": ("string", ("ingressClassName is the name of an IngressClass "
                             "cluster resource. Ingress controller implementations use this "
                             "field to know whether they should be serving this Ingress "
                             "resource. When unset, the DefaultIngressClass admission plugin "
                             "may set it to the default class.")),
        "defaultBackend": ("networking.IngressBackend", ("defaultBackend is the backend that "
                           "should handle requests that don't match any rule.")),
        "tls": ("[networking.IngressTLS", ("tls represents the TLS configuration. Each entry "
                "names the hosts a TLS secret covers.")),
        "rules": ("[networking.IngressRule", ("rules is a list of host rules used to configure "
                  "the Ingress. If unspecified, or no rule matches, all traffic is sent to the "
                  "default backend.")),
    }),
    "networking.IngressTLS": (("IngressTLS describes the transport layer security associated "
                              "with an ingress."), {
        "hosts": ("[string", ("hosts is a list of hosts included in the TLS certificate. The "
                  "values in this list must match the name/s used in the tlsSecret.")),
        "secretName": ("string", ("secretName is the name of the secret used to terminate TLS "
                       "traffic on port 443.")),
    }),
    "networking.IngressRule": (("IngressRule represents the rules mapping the paths under a "
                                "specified host to the related backend services."), {
        "host": ("string", ("host is the fully qualified domain name of a network host, as "
                 "defined by RFC 3986. It may be prefixed with a wildcard label (`*.foo.com`), "
                 "which matches exactly one DNS label. IP addresses are not allowed.")),
        "http": ("networking.HTTPIngressRuleValue", "http: a list of paths and their backends."),
    }),
    "networking.HTTPIngressRuleValue": (("HTTPIngressRuleValue is a list of http selectors "
                                         "pointing to backends."), {
        "paths": ("[networking.HTTPIngressPath", ("paths is a collection of paths that map "
                  "requests to backends.")),
    }, ("paths",)),
    "networking.HTTPIngressPath": (("HTTPIngressPath associates a path with a backend. Incoming "
                                    "urls matching the path are forwarded to the backend."), {
        "path": ("string", ("path is matched against the path of an incoming request. It must "
                 "begin with a '/'. When unspecified, all paths from incoming requests are "
                 "matched.")),
        "pathType": ("string", ("pathType determines the interpretation of the path matching. "
                     "PathType can be one of: Exact (matches the URL path exactly), Prefix "
                     "(matches based on a URL path prefix split by '/', element by element) "
                     "or ImplementationSpecific (up to the IngressClass).")),
        "backend": ("networking.IngressBackend", ("backend defines the referenced service "
                    "endpoint to which the traffic will be forwarded to.")),
    }, ("pathType", "backend")),
    "networking.IngressBackend": (("IngressBackend describes all endpoints for a given service "
                                   "and port."), {
        "service": ("networking.IngressServiceBackend", ("service references a service as a "
                    "backend. This is a mutually exclusive setting with \"Resource\".")),
        "resource": ("core.TypedLocalObjectReference", ("resource is an ObjectRef to another "
                     "Kubernetes resource in the namespace of the Ingress object. Mutually "
                     "exclusive with \"Service\".")),
    }),
    "networking.IngressServiceBackend": (("IngressServiceBackend references a Kubernetes "
                                         "Service as a Backend."), {
        "name": ("string", ("name is the referenced service. The service must exist in the same "
                 "namespace as the Ingress object.")),
        "port": ("networking.ServiceBackendPort", ("port of the referenced service. A port name "
                 "or port number is required for a IngressServiceBackend.")),
    }, ("name",)),
    "networking.ServiceBackendPort": ("ServiceBackendPort is the service port being referenced.", {
        "name": ("string", ("name is the name of the port on the Service. This is a mutually "
                 "exclusive setting with \"Number\".")),
        "number": ("int32", ("number is the numerical port number (e.g. 80) on the Service. "
                   "This is a mutually exclusive setting with \"Name\".")),
    }),
    "networking.IngressStatus": ("IngressStatus describe the current state of the Ingress.", {
        "loadBalancer": ("networking.IngressLoadBalancerStatus", ("loadBalancer contains the "
                         "current status of the load-balancer.")),
    }),
    "networking.IngressLoadBalancerStatus": (("IngressLoadBalancerStatus represents the status "
                                             "of a load-balancer."), {
        "ingress": ("[networking.IngressLoadBalancerIngress", ("ingress is a list containing "
                    "ingress points for the load-balancer.")),
    }),
    "networking.IngressLoadBalancerIngress": (("IngressLoadBalancerIngress represents the "
                                              "status of a load-balancer ingress point."), {
        "ip": ("string", "ip is set for load-balancer ingress points that are IP based."),
        "hostname": ("string", ("hostname is set for load-balancer ingress points that are DNS "
                     "based.")),
    }),
    "networking.IngressClass": (("IngressClass represents the class of the Ingress, referenced "
                                 "by the Ingress Spec. The "
                                 "`ingressclass.kubernetes.io/is-default-class` annotation can be "
                                 "used to indicate that an IngressClass should be considered "
                                 "default."), {
        "spec": ("networking.IngressClassSpec", "spec is the desired state of the IngressClass."),
    }),
    "networking.IngressClassSpec": (("IngressClassSpec provides information about the class of "
                                    "an Ingress."), {
        "controller": ("string", ("controller refers to the name of the controller that should "
                       "handle this class, a domain-prefixed path such as "
                       "\"acme.io/ingress-controller\". This field is immutable.")),
        "parameters": ("networking.IngressClassParametersReference", ("parameters is a link to "
                       "a custom resource containing additional configuration for the "
                       "controller.")),
    }),
    "networking.IngressClassParametersReference": (("IngressClassParametersReference "
                                                    "identifies an API object."), {
        "apiGroup": ("string", "apiGroup is the group for the resource being referenced."),
        "kind": ("string", "kind is the type of resource being referenced."),
        "name": ("string", "name is the name of resource being referenced."),
        "scope": ("string", ("scope represents if this refers to a cluster or namespace scoped "
                  "resource: \"Cluster\" (default) or \"Namespace\".")),
        "namespace": ("string", ("namespace is the namespace of the resource being referenced. "
                      "Required when scope is \"Namespace\"; must be unset when \"Cluster\".")),
    }, ("kind", "name")),
    "networking.NetworkPolicy": (("NetworkPolicy describes what network traffic is allowed for "
                                 "a set of Pods"), {
        "spec": ("networking.NetworkPolicySpec", ("spec represents the specification of the "
                 "desired behavior for this NetworkPolicy.")),
    }),
    "networking.NetworkPolicySpec": (("NetworkPolicySpec provides the specification of a "
                                     "NetworkPolicy"), {
        "podSelector": ("LabelSelector", ("podSelector selects the pods to which this "
                        "NetworkPolicy object applies. An empty podSelector selects all pods in "
                        "this namespace.")),
        "ingress": ("[networking.NetworkPolicyIngressRule", ("ingress is a list of ingress "
                    "rules to be applied to the selected pods. Traffic is allowed to a pod if "
                    "it matches at least one rule across all NetworkPolicies selecting it.")),
        "egress": ("[networking.NetworkPolicyEgressRule", ("egress is a list of egress rules to "
                   "be applied to the selected pods.")),
        "policyTypes": ("[string", ("policyTypes is a list of rule types that the NetworkPolicy "
                        "relates to: \"Ingress\", \"Egress\" or both. Defaults to [\"Ingress\"], "
                        "plus \"Egress\" when the policy has egress rules.")),
    }),
    "networking.NetworkPolicyIngressRule": (("NetworkPolicyIngressRule describes a particular "
                                             "set of traffic that is allowed to the pods "
                                             "matched by a NetworkPolicySpec's podSelector."), {
        "ports": ("[networking.NetworkPolicyPort", ("ports is a list of ports which should be "
                  "made accessible on the pods selected for this rule.")),
        "from": ("[networking.NetworkPolicyPeer", ("from is a list of sources which should be "
                 "able to access the pods selected for this rule.")),
    }),
    "networking.NetworkPolicyEgressRule": (("NetworkPolicyEgressRule describes a particular set "
                                            "of traffic that is allowed out of pods matched by a "
                                            "NetworkPolicySpec's podSelector."), {
        "ports": ("[networking.NetworkPolicyPort", ("ports is a list of destination ports for "
                  "outgoing traffic.")),
        "to": ("[networking.NetworkPolicyPeer", ("to is a list of destinations for outgoing "
               "traffic of pods selected for this rule.")),
    }),
    "networking.NetworkPolicyPeer": (("NetworkPolicyPeer describes a peer to allow traffic "
                                      "to/from. Only certain combinations of fields are "
                                      "allowed"), {
        "podSelector": ("LabelSelector", "podSelector is a label selector which selects pods."),
        "namespaceSelector": ("LabelSelector", ("namespaceSelector selects namespaces using "
                              "cluster-scoped labels.")),
        "ipBlock": ("networking.IPBlock", ("ipBlock defines policy on a particular IPBlock. If "
                    "this field is set then neither of the other fields can be.")),
    }),
    "networking.NetworkPolicyPort": ("NetworkPolicyPort describes a port to allow traffic on", {
        "protocol": ("string", ("protocol represents the protocol (TCP, UDP, or SCTP) which "
                     "traffic must match. If not specified, this field defaults to TCP.")),
        "port": ("IntOrString", ("port represents the port on the given protocol. This can "
                 "either be a numerical or named port on a pod.")),
        "endPort": ("int32", ("endPort indicates that the range of ports from port to endPort "
                    "if set, inclusive, should be allowed by the policy. Cannot be defined if "
                    "port is not defined or if port is named.")),
    }),
    "networking.IPBlock": (("IPBlock describes a particular CIDR (Ex. "
                            "\"192.168.1.0/24\",\"2001:db8::/64\") that is allowed to the pods "
                            "matched by a NetworkPolicySpec's podSelector."), {
        "cidr": ("string", "cidr is a string representing the IPBlock"),
        "except": ("[string", ("except is a slice of CIDRs that should not be included within "
                   "an IPBlock. Except values will be rejected if they are outside the cidr "
                   "range")),
    }, ("cidr",)),
}
