"""Schema tables for discovery.k8s.io/v1 EndpointSlice (see openapi_schemas.py for the
notation). Kubernetes piece: k8s.io/api/discovery/v1 types.go doc comments, which
`kubectl explain endpointslice` prints. Every list is atomic upstream (no merge keys).
"""

from __future__ import annotations

RAW: dict = {}
KINDS = frozenset({"discovery.EndpointSlice"})
UNLISTED: frozenset = frozenset()

TYPES = {
    "discovery.EndpointSlice": (
        ("EndpointSlice represents a subset of the endpoints that implement a service. For a "
        "given service there may be multiple EndpointSlice objects, selected by labels, which "
        "must be joined to produce the full set of endpoints."), {
            "addressType": ("string", ("addressType specifies the type of address carried by "
                            "this EndpointSlice. All addresses in this slice must be the same "
                            "type. This field is immutable after creation. The following "
                            "address types are currently supported:\n* IPv4: Represents an IPv4 "
                            "Address.\n* IPv6: Represents an IPv6 Address.\n* FQDN: Represents "
                            "a Fully Qualified Domain Name.")),
            "endpoints": ("[discovery.Endpoint", ("endpoints is a list of unique endpoints in "
                          "this slice. Each slice may include a maximum of 1000 endpoints.")),
            "ports": ("[discovery.EndpointPort", ("ports specifies the list of network ports "
                      "exposed by each endpoint in this slice. Each port must have a unique "
                      "name. When ports is empty, it indicates that there are no defined ports. "
                      "When a port is defined with a nil port value, it indicates \"all "
                      "ports\". Each slice may include a maximum of 100 ports.")),
        }, ("addressType", "endpoints")),
    "discovery.Endpoint": (
        "Endpoint represents a single logical \"backend\" implementing a service.", {
            "addresses": ("[string", ("addresses of this endpoint. The contents of this field "
                          "are interpreted according to the corresponding EndpointSlice "
                          "addressType field. Consumers must handle different types of "
                          "addresses in the context of their own capabilities. This must "
                          "contain at least one address but no more than 100.")),
            "conditions": ("discovery.EndpointConditions", ("conditions contains information "
                           "about the current status of the endpoint.")),
            "hostname": ("string", ("hostname of this endpoint. This field may be used by "
                         "consumers of endpoints to distinguish endpoints from each other (e.g. "
                         "in DNS names). Multiple endpoints which use the same hostname should "
                         "be considered fungible (e.g. multiple A values in DNS). Must be "
                         "lowercase and pass DNS Label (RFC 1123) validation.")),
            "targetRef": ("core.ObjectReference", ("targetRef is a reference to a Kubernetes "
                          "object that represents this endpoint.")),
            "deprecatedTopology": ("{string", ("deprecatedTopology contains topology "
                                   "information part of the v1beta1 API. This field is "
                                   "deprecated, and will be removed when the v1beta1 API is "
                                   "removed (no sooner than kubernetes v1.24).  While this "
                                   "field can hold values, it is not writable through the v1 "
                                   "API, and any attempts to write to it will be silently "
                                   "ignored. Topology information can be found in the zone "
                                   "and nodeName fields instead.")),
            "nodeName": ("string", ("nodeName represents the name of the Node hosting this "
                         "endpoint. This can be used to determine endpoints local to a Node.")),
            "zone": ("string", "zone is the name of the Zone this endpoint exists in."),
            "hints": ("discovery.EndpointHints", ("hints contains information associated with "
                      "how an endpoint should be consumed.")),
        }, ("addresses",)),
    "discovery.EndpointConditions": (
        "EndpointConditions represents the current condition of an endpoint.", {
            "ready": ("boolean", ("ready indicates that this endpoint is prepared to receive "
                      "traffic, according to whatever system is managing the endpoint. A nil "
                      "value indicates an unknown state. In most cases consumers should "
                      "interpret this unknown state as ready. For compatibility reasons, ready "
                      "should never be \"true\" for terminating endpoints, except when the "
                      "normal readiness behavior is being explicitly overridden, for example "
                      "when the associated Service has set the publishNotReadyAddresses "
                      "flag.")),
            "serving": ("boolean", ("serving is identical to ready except that it is set "
                        "regardless of the terminating state of endpoints. This condition "
                        "should be set to true for a ready endpoint that is terminating. If "
                        "nil, consumers should defer to the ready condition.")),
            "terminating": ("boolean", ("terminating indicates that this endpoint is "
                            "terminating. A nil value indicates an unknown state. Consumers "
                            "should interpret this unknown state to mean that the endpoint is "
                            "not terminating.")),
        }),
    "discovery.EndpointHints": (
        "EndpointHints provides hints describing how an endpoint should be consumed.", {
            "forZones": ("[discovery.ForZone", ("forZones indicates the zone(s) this endpoint "
                         "should be consumed by to enable topology aware routing.")),
        }),
    "discovery.ForZone": (
        "ForZone provides information about which zones should consume this endpoint.", {
            "name": ("string", "name represents the name of the zone."),
        }, ("name",)),
    "discovery.EndpointPort": (
        "EndpointPort represents a Port used by an EndpointSlice", {
            "name": ("string", ("name represents the name of this port. All ports in an "
                     "EndpointSlice must have a unique name. If the EndpointSlice is derived "
                     "from a Kubernetes service, this corresponds to the Service.ports[].name. "
                     "Name must either be an empty string or pass DNS_LABEL validation:\n* must "
                     "be no more than 63 characters long.\n* must consist of lower case "
                     "alphanumeric characters or '-'.\n* must start and end with an "
                     "alphanumeric character.\nDefault is empty string.")),
            "protocol": ("string", ("protocol represents the IP protocol for this port. Must "
                         "be UDP, TCP, or SCTP. Default is TCP.")),
            "port": ("int32", ("port represents the port number of the endpoint. If this is "
                     "not specified, ports are not restricted and must be interpreted in the "
                     "context of the specific consumer.")),
            "appProtocol": ("string", ("The application protocol for this port. This is used "
                            "as a hint for implementations to offer richer behavior for "
                            "protocols that they understand. This field follows standard "
                            "Kubernetes label syntax. Valid values are either:\n\n* Un-prefixed "
                            "protocol names - reserved for IANA standard service names (as per "
                            "RFC-6335 and https://www.iana.org/assignments/service-names).\n\n* "
                            "Kubernetes-defined prefixed names:\n  * 'kubernetes.io/h2c' - "
                            "HTTP/2 prior knowledge over cleartext as described in "
                            "https://www.rfc-editor.org/rfc/rfc9113.html#name-starting-http-2-"
                            "with-prior-\n  * 'kubernetes.io/ws'  - WebSocket over cleartext as "
                            "described in https://www.rfc-editor.org/rfc/rfc6455\n  * "
                            "'kubernetes.io/wss' - WebSocket over TLS as described in "
                            "https://www.rfc-editor.org/rfc/rfc6455\n\n* Other protocols should "
                            "use implementation-defined prefixed names such as mycompany.com/"
                            "my-custom-protocol.")),
        }),
}
