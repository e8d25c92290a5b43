"""Schema tables for meta/v1, apps/v1 and autoscaling/v1 (see openapi_schemas.py for the
notation). Kubernetes piece: the doc comments of k8s.io/apimachinery/pkg/apis/meta/v1,
k8s.io/api/apps/v1 and k8s.io/api/autoscaling/v1 as kube-openapi publishes them, shortened.
"""

from __future__ import annotations

_TIME_DOC = (
    "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON. "
    "Wrappers are provided for many of the factory methods that the time package offers."
)

#: Schemas that are not objects (strings with a format, int-or-string, quantities).
RAW = {
    "meta.Time": {"description": _TIME_DOC, "type": "string", "format": "date-time"},
    "meta.MicroTime": {"description": "MicroTime is version of Time with microsecond level "
                       "precision.", "type": "string", "format": "date-time"},
    "meta.FieldsV1": {"description": "FieldsV1 stores a set of fields in a data structure like "
                      "a Trie, in JSON format.", "type": "object"},
    "meta.Patch": {"description": "Patch is provided to give a concrete name and type to the "
                   "Kubernetes PATCH request body.", "type": "object"},
    "resource.Quantity": {
        "description": "Quantity is a fixed-point representation of a number. It provides "
        "convenient marshaling/unmarshaling in JSON and YAML, in addition to String() and "
        "AsInt64() accessors. Examples: 100m, 1Gi, 0.5.",
        "oneOf": [{"type": "string"}, {"type": "number"}],
    },
    "intstr.IntOrString": {
        "description": "IntOrString is a type that can hold an int32 or a string. When used in "
        "JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.",
        "x-kubernetes-int-or-string": True,
        "anyOf": [{"type": "integer"}, {"type": "string"}],
    },
}

KINDS = frozenset({"apps.Deployment", "apps.ReplicaSet", "autoscaling.Scale"})
UNLISTED = frozenset({"autoscaling.Scale"})

TYPES = {
    # ------------------------------------------------------------------ meta/v1
    "meta.ObjectMeta": ("ObjectMeta is metadata that all persisted resources must have, which "
                        "includes all objects users must create.", {
        "name": ("string", "Name must be unique within a namespace. Cannot be updated."),
        "generateName": ("string", "GenerateName is an optional prefix, used by the server, to "
                         "generate a unique name ONLY IF the Name field has not been provided."),
        "namespace": ("string", "Namespace defines the space within which each name must be "
                      "unique. Cannot be updated."),
        "selfLink": ("string", "Deprecated: selfLink is a legacy read-only field that is no "
                     "longer populated by the system."),
        "uid": ("string", "UID is the unique in time and space value for this object. "
                "Populated by the system. Read-only."),
        "resourceVersion": ("string", "An opaque value that represents the internal version "
                            "of this object, used for optimistic concurrency and watch."),
        "generation": ("int64", "A sequence number representing a specific generation of the "
                       "desired state. Populated by the system. Read-only."),
        "creationTimestamp": ("Time", "CreationTimestamp is a timestamp representing the "
                              "server time when this object was created. Read-only."),
        "deletionTimestamp": ("Time", "DeletionTimestamp is RFC 3339 date and time at which "
                              "this resource will be deleted. Set by the server. Read-only."),
        "deletionGracePeriodSeconds": ("int64", "Number of seconds allowed for this object to "
                                       "gracefully terminate before it will be removed."),
        "labels": ("{string", "Map of string keys and values that can be used to organize and "
                   "categorize (scope and select) objects."),
        "annotations": ("{string", "Annotations is an unstructured key value map stored with a "
                        "resource that may be set by external tools to store metadata."),
        "ownerReferences": ("[meta.OwnerReference", "List of objects depended by this object. "
                            "Garbage collection uses them.", "uid"),
        "finalizers": ("[string", "Must be empty before the object is deleted from the "
                       "registry.", None, "merge"),
        "managedFields": ("[meta.ManagedFieldsEntry", "ManagedFields maps workflow-id and "
                          "version to the set of fields that are managed by that workflow."),
    }),
    "meta.OwnerReference": ("OwnerReference contains enough information to let you identify an "
                            "owning object.", {
        "apiVersion": ("string", "API version of the referent."),
        "kind": ("string", "Kind of the referent."),
        "name": ("string", "Name of the referent."),
        "uid": ("string", "UID of the referent."),
        "controller": ("boolean", "If true, this reference points to the managing controller."),
        "blockOwnerDeletion": ("boolean", "If true, the owner cannot be deleted from the "
                               "key-value store until this reference is removed."),
    }, ("apiVersion", "kind", "name", "uid")),
    "meta.ManagedFieldsEntry": ("ManagedFieldsEntry is a workflow-id, a FieldSet and the group "
                                "version of the resource that the fieldset applies to.", {
        "manager": ("string", "Manager is an identifier of the workflow managing these fields."),
        "operation": ("string", "Operation is the type of operation which lead to this entry: "
                      "Apply or Update."),
        "apiVersion": ("string", "APIVersion defines the version of this resource that this "
                       "field set applies to."),
        "time": ("Time", "Time is the timestamp of when the ManagedFields entry was added."),
        "fieldsType": ("string", "FieldsType is the discriminator for the different fields "
                       "format and version. The only valid value is FieldsV1."),
        "fieldsV1": ("meta.FieldsV1", "FieldsV1 holds the first JSON version format."),
        "subresource": ("string", "Subresource is the name of the subresource used to update "
                        "that object, or empty string if the object was updated through the "
                        "main resource."),
    }),
    "meta.ListMeta": ("ListMeta describes metadata that synthetic resources must have, "
                      "including lists and various status objects.", {
        "selfLink": ("string", "Deprecated: selfLink is a legacy read-only field."),
        "resourceVersion": ("string", "String that identifies the server's internal version of "
                            "this object that can be used by clients to determine when objects "
                            "have changed."),
        "continue": ("string", "continue may be set if the user set a limit on the number of "
                     "items returned, and indicates that the server has more data available."),
        "remainingItemCount": ("int64", "remainingItemCount is the number of subsequent items "
                               "in the list which are not included in this list response."),
    }),
    "meta.LabelSelector": ("A label selector is a label query over a set of resources. An "
                           "empty label selector matches all objects; a null one matches "
                           "none.", {
        "matchLabels": ("{string", "matchLabels is a map of {key,value} pairs, each equivalent "
                        "to an element of matchExpressions with operator In."),
        "matchExpressions": ("[meta.LabelSelectorRequirement", "matchExpressions is a list of "
                             "label selector requirements. The requirements are ANDed."),
    }),
    "meta.LabelSelectorRequirement": ("A label selector requirement is a selector that "
                                      "contains values, a key, and an operator.", {
        "key": ("string", "key is the label key that the selector applies to."),
        "operator": ("string", "operator represents a key's relationship to a set of values: "
                     "In, NotIn, Exists and DoesNotExist."),
        "values": ("[string", "values is an array of string values."),
    }, ("key", "operator")),
    "meta.Condition": ("Condition contains details for one aspect of the current state of this "
                       "API Resource.", {
        "type": ("string", "type of condition in CamelCase or in foo.example.com/CamelCase."),
        "status": ("string", "status of the condition, one of True, False, Unknown."),
        "observedGeneration": ("int64", "the .metadata.generation that the condition was set "
                               "based upon."),
        "lastTransitionTime": ("Time", "the last time the condition transitioned from one "
                               "status to another."),
        "reason": ("string", "a programmatic identifier indicating the reason for the "
                   "condition's last transition."),
        "message": ("string", "a human readable message indicating details about the "
                    "transition."),
    }, ("type", "status", "lastTransitionTime", "reason", "message")),
    "meta.Status": ("Status is a return value for calls that don't return other objects.", {
        "apiVersion": ("string", "APIVersion defines the versioned schema of this "
                       "representation of an object."),
        "kind": ("string", "Kind is a string value representing the REST resource this object "
                 "represents."),
        "metadata": ("ListMeta", "Standard list metadata."),
        "status": ("string", "Status of the operation. One of: \"Success\" or \"Failure\"."),
        "message": ("string", "A human-readable description of the status of this operation."),
        "reason": ("string", "A machine-readable description of why this operation is in the "
                   "\"Failure\" status."),
        "details": ("meta.StatusDetails", "Extended data associated with the reason."),
        "code": ("int32", "Suggested HTTP return code for this status, 0 if not set."),
    }),
    "meta.StatusDetails": ("StatusDetails is a set of additional properties that MAY be set by "
                           "the server to provide additional information about a response.", {
        "name": ("string", "The name attribute of the resource associated with the status "
                 "StatusReason (when there is a single name which can be described)."),
        "group": ("string", "The group attribute of the resource associated with the status "
                  "StatusReason."),
        "kind": ("string", "The kind attribute of the resource associated with the status "
                 "StatusReason."),
        "uid": ("string", "UID of the resource."),
        "causes": ("[meta.StatusCause", "The Causes array includes more details associated "
                   "with the StatusReason failure."),
        "retryAfterSeconds": ("int32", "If specified, the time in seconds before the operation "
                              "should be retried."),
    }),
    "meta.StatusCause": ("StatusCause provides more information about an api.Status failure, "
                         "including cases when multiple errors are encountered.", {
        "reason": ("string", "A machine-readable description of the cause of the error."),
        "message": ("string", "A human-readable description of the cause of the error."),
        "field": ("string", "The field of the resource that has caused this error, as named "
                  "by its JSON serialization."),
    }),
    "meta.DeleteOptions": ("DeleteOptions may be provided when deleting an API object.", {
        "apiVersion": ("string", "APIVersion defines the versioned schema of this "
                       "representation of an object."),
        "kind": ("string", "Kind is a string value representing the REST resource this object "
                 "represents."),
        "gracePeriodSeconds": ("int64", "The duration in seconds before the object should be "
                               "deleted. Zero means delete immediately."),
        "preconditions": ("meta.Preconditions", "Must be fulfilled before a deletion is "
                          "carried out."),
        "orphanDependents": ("boolean", "Deprecated: please use the PropagationPolicy."),
        "propagationPolicy": ("string", "Whether and how garbage collection will be performed: "
                              "Orphan, Background or Foreground."),
        "dryRun": ("[string", "When present, indicates that modifications should not be "
                   "persisted."),
    }),
    "meta.Preconditions": ("Preconditions must be fulfilled before an operation (update, "
                           "delete, etc.) is carried out.", {
        "uid": ("string", "Specifies the target UID."),
        "resourceVersion": ("string", "Specifies the target ResourceVersion"),
    }),
    # ------------------------------------------------------------------ apps/v1
    "apps.Deployment": ("Deployment enables declarative updates for Pods and ReplicaSets.", {
        "spec": ("apps.DeploymentSpec", "Specification of the desired behavior of the "
                 "Deployment."),
        "status": ("apps.DeploymentStatus", "Most recently observed status of the Deployment."),
    }),
    "apps.DeploymentSpec": ("DeploymentSpec is the specification of the desired behavior of "
                            "the Deployment.", {
        "replicas": ("int32", "Number of desired pods. Defaults to 1."),
        "selector": ("LabelSelector", "Label selector for pods. It must match the pod "
                     "template's labels."),
        "template": ("core.PodTemplateSpec", "Template describes the pods that will be "
                     "created."),
        "strategy": ("apps.DeploymentStrategy", "The deployment strategy to use to replace "
                     "existing pods with new ones.", None, "retainKeys"),
        "minReadySeconds": ("int32", "Minimum number of seconds for which a newly created pod "
                            "should be ready without any of its container crashing."),
        "revisionHistoryLimit": ("int32", "The number of old ReplicaSets to retain to allow "
                                 "rollback. Defaults to 10."),
        "paused": ("boolean", "Indicates that the deployment is paused."),
        "progressDeadlineSeconds": ("int32", "The maximum time in seconds for a deployment to "
                                    "make progress before it is considered to be failed."),
    }, ("selector", "template")),
    "apps.DeploymentStrategy": ("DeploymentStrategy describes how to replace existing pods "
                                "with new ones.", {
        "type": ("string", "Type of deployment: \"Recreate\" or \"RollingUpdate\" (default)."),
        "rollingUpdate": ("apps.RollingUpdateDeployment", "Rolling update config params. "
                          "Present only if DeploymentStrategyType = RollingUpdate."),
    }),
    "apps.RollingUpdateDeployment": ("Spec to control the desired behavior of rolling "
                                     "update.", {
        "maxUnavailable": ("IntOrString", "The maximum number of pods that can be unavailable "
                           "during the update. Defaults to 25%."),
        "maxSurge": ("IntOrString", "The maximum number of pods that can be scheduled above "
                     "the desired number of pods. Defaults to 25%."),
    }),
    "apps.DeploymentStatus": ("DeploymentStatus is the most recently observed status of the "
                              "Deployment.", {
        "observedGeneration": ("int64", "The generation observed by the deployment "
                               "controller."),
        "replicas": ("int32", "Total number of non-terminated pods targeted by this "
                     "deployment (their labels match the selector)."),
        "updatedReplicas": ("int32", "Total number of non-terminated pods targeted by this "
                            "deployment that have the desired template spec."),
        "readyReplicas": ("int32", "Total number of ready pods targeted by this deployment."),
        "availableReplicas": ("int32", "Total number of available pods (ready for at least "
                              "minReadySeconds) targeted by this deployment."),
        "unavailableReplicas": ("int32", "Total number of unavailable pods targeted by this "
                                "deployment."),
        "conditions": ("[apps.DeploymentCondition", "Represents the latest available "
                       "observations of a deployment's current state.", "type"),
        "collisionCount": ("int32", "Count of hash collisions for the Deployment."),
    }),
    "apps.DeploymentCondition": ("DeploymentCondition describes the state of a deployment at a "
                                 "certain point.", {
        "type": ("string", "Type of deployment condition."),
        "status": ("string", "Status of the condition, one of True, False, Unknown."),
        "lastUpdateTime": ("Time", "The last time this condition was updated."),
        "lastTransitionTime": ("Time", "Last time the condition transitioned from one status "
                               "to another."),
        "reason": ("string", "The reason for the condition's last transition."),
        "message": ("string", "A human readable message indicating details about the "
                    "transition."),
    }, ("type", "status")),
    "apps.ReplicaSet": ("ReplicaSet ensures that a specified number of pod replicas are running "
                        "at any given time.", {
        "spec": ("apps.ReplicaSetSpec", "Spec defines the specification of the desired "
                 "behavior of the ReplicaSet."),
        "status": ("apps.ReplicaSetStatus", "Status is the most recently observed status of "
                   "the ReplicaSet."),
    }),
    "apps.ReplicaSetSpec": ("ReplicaSetSpec is the specification of a ReplicaSet.", {
        "replicas": ("int32", "Replicas is the number of desired replicas. Defaults to 1."),
        "minReadySeconds": ("int32", "Minimum number of seconds for which a newly created pod "
                            "should be ready without any of its container crashing."),
        "selector": ("LabelSelector", "Selector is a label query over pods that should match "
                     "the replica count."),
        "template": ("core.PodTemplateSpec", "Template is the object that describes the pod "
                     "that will be created if insufficient replicas are detected."),
    }, ("selector",)),
    "apps.ReplicaSetStatus": ("ReplicaSetStatus represents the current status of a "
                              "ReplicaSet.", {
        "replicas": ("int32", "Replicas is the most recently observed number of replicas."),
        "fullyLabeledReplicas": ("int32", "The number of pods that have labels matching the "
                                 "labels of the pod template of the replicaset."),
        "readyReplicas": ("int32", "The number of ready replicas for this replica set."),
        "availableReplicas": ("int32", "The number of available replicas (ready for at least "
                              "minReadySeconds) for this replica set."),
        "observedGeneration": ("int64", "ObservedGeneration reflects the generation of the "
                               "most recently observed ReplicaSet."),
        "conditions": ("[apps.ReplicaSetCondition", "Represents the latest available "
                       "observations of a replica set's current state.", "type"),
    }, ("replicas",)),
    "apps.ReplicaSetCondition": ("ReplicaSetCondition describes the state of a replica set at "
                                 "a certain point.", {
        "type": ("string", "Type of replica set condition."),
        "status": ("string", "Status of the condition, one of True, False, Unknown."),
        "lastTransitionTime": ("Time", "The last time the condition transitioned from one "
                               "status to another."),
        "reason": ("string", "The reason for the condition's last transition."),
        "message": ("string", "A human readable message indicating details about the "
                    "transition."),
    }, ("type", "status")),
    # ------------------------------------------------------------------ autoscaling/v1
    "autoscaling.Scale": ("Scale represents a scaling request for a resource.", {
        "spec": ("autoscaling.ScaleSpec", "spec defines the behavior of the scale."),
        "status": ("autoscaling.ScaleStatus", "status is the current status of the scale. "
                   "Read-only."),
    }),
    "autoscaling.ScaleSpec": ("ScaleSpec describes the attributes of a scale subresource.", {
        "replicas": ("int32", "replicas is the desired number of instances for the scaled "
                     "object."),
    }),
    "autoscaling.ScaleStatus": ("ScaleStatus represents the current status of a scale "
                                "subresource.", {
        "replicas": ("int32", "replicas is the actual number of observed instances of the "
                     "scaled object."),
        "selector": ("string", "selector is the label query over pods that should match the "
                     "replicas count, in the string form used by query parameters."),
    }, ("replicas",)),
}
