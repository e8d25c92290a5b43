"""Schema tables for node.k8s.io/v1 RuntimeClass and flowcontrol.apiserver.k8s.io/v1
FlowSchema and PriorityLevelConfiguration (see openapi_schemas.py for the notation).
Kubernetes piece: k8s.io/api/node/v1 and k8s.io/api/flowcontrol/v1 types.go doc comments,
shortened. What the tables leave out (subjects' and rules' inner types, conditions, the
exempt section) is completed from the protobuf description.
"""

from __future__ import annotations

RAW: dict = {}
KINDS = frozenset({"node.RuntimeClass", "flowcontrol.FlowSchema",
                   "flowcontrol.PriorityLevelConfiguration"})
UNLISTED: frozenset = frozenset()

TYPES = {
    "node.RuntimeClass": (
        ("RuntimeClass defines a class of container runtime supported in the cluster. The "
        "RuntimeClass is used to determine which container runtime is used to run all "
        "containers in a pod. RuntimeClasses are manually defined by a user or cluster "
        "provisioner, and referenced in the PodSpec."), {
            "handler": ("string", (
                "handler specifies the underlying runtime and configuration that the CRI "
                "implementation will use to handle pods of this class. The handler must be a "
                "lowercase DNS label (RFC 1123) and is immutable.")),
            "overhead": ("node.Overhead", (
                "overhead represents the resource overhead associated with running a pod for a "
                "given RuntimeClass.")),
            "scheduling": ("node.Scheduling", (
                "scheduling holds the scheduling constraints to ensure that pods running with "
                "this RuntimeClass are scheduled to nodes that support it. If scheduling is "
                "nil, this RuntimeClass is assumed to be supported by all nodes.")),
        }, ("handler",)),
    "node.Overhead": (("Overhead structure represents the resource overhead associated with "
                      "running a pod."), {
        "podFixed": ("{Quantity", ("podFixed represents the fixed resource overhead associated "
                     "with running a pod.")),
    }),
    "node.Scheduling": (("Scheduling specifies the scheduling constraints for nodes supporting a "
                        "RuntimeClass."), {
        "nodeSelector": ("{string", (
            "nodeSelector lists labels that must be present on nodes that support this "
            "RuntimeClass. Pods using this RuntimeClass can only be scheduled to a node matched "
            "by this selector. The RuntimeClass nodeSelector is merged with a pod's existing "
            "nodeSelector.")),
        "tolerations": ("[core.Toleration", (
            "tolerations are appended (excluding duplicates) to pods running with this "
            "RuntimeClass during admission, effectively unioning the set of nodes tolerated by "
            "the pod and the RuntimeClass.")),
    }),
    "flowcontrol.FlowSchema": (
        ("FlowSchema defines the schema of a group of flows. Note that a flow is made up of a "
        "set of inbound API requests with similar attributes and is identified by a pair of "
        "strings: the name of the FlowSchema and a \"flow distinguisher\"."), {
            "spec": ("flowcontrol.FlowSchemaSpec", (
                "`spec` is the specification of the desired behavior of a FlowSchema.")),
            "status": ("flowcontrol.FlowSchemaStatus", (
                "`status` is the current status of a FlowSchema.")),
        }),
    "flowcontrol.FlowSchemaSpec": (("FlowSchemaSpec describes how the FlowSchema's "
                                   "specification looks like."), {
        "priorityLevelConfiguration": ("flowcontrol.PriorityLevelConfigurationReference", (
            "`priorityLevelConfiguration` should reference a PriorityLevelConfiguration in the "
            "cluster. If the reference cannot be resolved, the FlowSchema will be ignored and "
            "marked as invalid in its status. Required.")),
        "matchingPrecedence": ("int32", (
            "`matchingPrecedence` is used to choose among the FlowSchemas that match a given "
            "request. The chosen FlowSchema is among those with the numerically lowest (which "
            "we take to be logically highest) MatchingPrecedence. Each MatchingPrecedence value "
            "must be ranged in [1,10000]. Note that if the precedence is not specified, it will "
            "be set to 1000 as default.")),
        "distinguisherMethod": ("flowcontrol.FlowDistinguisherMethod", (
            "`distinguisherMethod` defines how to compute the flow distinguisher for requests "
            "that match this schema. `nil` specifies that the distinguisher is disabled and "
            "thus will always be the empty string.")),
        "rules": ("[flowcontrol.PolicyRulesWithSubjects", (
            "`rules` describes which requests will match this flow schema. This FlowSchema "
            "matches a request if and only if at least one member of rules matches the "
            "request. If it is an empty slice, there will be no requests matching the "
            "FlowSchema.")),
    }, ("priorityLevelConfiguration",)),
    "flowcontrol.PriorityLevelConfigurationReference": (
        ("PriorityLevelConfigurationReference contains information that points to the "
        "\"request-priority\" being used."), {
            "name": ("string", ("`name` is the name of the priority level configuration being "
                     "referenced Required.")),
        }, ("name",)),
    "flowcontrol.FlowDistinguisherMethod": (
        "FlowDistinguisherMethod specifies the method of a flow distinguisher.", {
            "type": ("string", ("`type` is the type of flow distinguisher method The supported "
                     "types are \"ByUser\" and \"ByNamespace\". Required.")),
        }, ("type",)),
    "flowcontrol.PriorityLevelConfiguration": (
        "PriorityLevelConfiguration represents the configuration of a priority level.", {
            "spec": ("flowcontrol.PriorityLevelConfigurationSpec", (
                "`spec` is the specification of the desired behavior of a "
                "\"request-priority\".")),
            "status": ("flowcontrol.PriorityLevelConfigurationStatus", (
                "`status` is the current status of a \"request-priority\".")),
        }),
    "flowcontrol.PriorityLevelConfigurationSpec": (
        "PriorityLevelConfigurationSpec specifies the configuration of a priority level.", {
            "type": ("string", (
                "`type` indicates whether this priority level is subject to limitation on "
                "request execution. A value of `\"Exempt\"` means that requests of this "
                "priority level are not subject to a limit (and thus are never queued) and do "
                "not detract from the capacity made available to other priority levels. A "
                "value of `\"Limited\"` means that (a) requests of this priority level _are_ "
                "subject to limits and (b) some of the server's limited capacity is made "
                "available exclusively to this priority level. Required.")),
            "limited": ("flowcontrol.LimitedPriorityLevelConfiguration", (
                "`limited` specifies how requests are handled for a Limited priority level. "
                "This field must be non-empty if and only if `type` is `\"Limited\"`.")),
            "exempt": ("flowcontrol.ExemptPriorityLevelConfiguration", (
                "`exempt` specifies how requests are handled for an exempt priority level. "
                "This field MUST be empty if `type` is `\"Limited\"`.")),
        }, ("type",)),
    "flowcontrol.LimitedPriorityLevelConfiguration": (
        ("LimitedPriorityLevelConfiguration specifies how to handle requests that are subject "
        "to limits."), {
            "nominalConcurrencyShares": ("int32", (
                "`nominalConcurrencyShares` (NCS) contributes to the computation of the "
                "NominalConcurrencyLimit (NominalCL) of this level. If not specified, this "
                "field defaults to a value of 30.")),
            "limitResponse": ("flowcontrol.LimitResponse", (
                "`limitResponse` indicates what to do with requests that can not be executed "
                "right now")),
            "lendablePercent": ("int32", (
                "`lendablePercent` prescribes the fraction of the level's NominalCL that can be "
                "borrowed by other priority levels. The value of this field must be between 0 "
                "and 100, inclusive, and it defaults to 0.")),
            "borrowingLimitPercent": ("int32", (
                "`borrowingLimitPercent`, if present, configures a limit on how many seats this "
                "priority level can borrow from other priority levels.")),
        }),
    "flowcontrol.LimitResponse": (
        "LimitResponse defines how to handle requests that can not be executed right now.", {
            "type": ("string", (
                "`type` is \"Queue\" or \"Reject\". \"Queue\" means that requests that can not "
                "be executed upon arrival are held in a queue until they can be executed or a "
                "queuing limit is reached. \"Reject\" means that requests that can not be "
                "executed upon arrival are rejected. Required.")),
            "queuing": ("flowcontrol.QueuingConfiguration", (
                "`queuing` holds the configuration parameters for queuing. This field may be "
                "non-empty only if `type` is `\"Queue\"`.")),
        }, ("type",)),
    "flowcontrol.QueuingConfiguration": (
        "QueuingConfiguration holds the configuration parameters for queuing", {
            "queues": ("int32", (
                "`queues` is the number of queues for this priority level. The queues exist "
                "independently at each apiserver. The value must be positive. This field has a "
                "default value of 64.")),
            "handSize": ("int32", (
                "`handSize` is a small positive number that configures the shuffle sharding of "
                "requests into queues. handSize must be no larger than `queues`, and should be "
                "significantly smaller. This field has a default value of 8.")),
            "queueLengthLimit": ("int32", (
                "`queueLengthLimit` is the maximum number of requests allowed to be waiting in "
                "a given queue of this priority level at a time; excess requests are rejected. "
                "This value must be positive. If not specified, it will be defaulted to 50.")),
        }),
}
