"""Schema tables for policy/v1 PodDisruptionBudget and Eviction (see openapi_schemas.py for
the notation). Kubernetes piece: k8s.io/api/policy/v1 types.go doc comments, shortened.
Fields the table leaves out (the Eviction's deleteOptions) are completed from the protobuf
description (openapi_proto_schemas.py).
"""

from __future__ import annotations

RAW: dict = {}
KINDS = frozenset({"policy.PodDisruptionBudget", "policy.Eviction"})
UNLISTED = frozenset({"policy.Eviction"})

TYPES = {
    "policy.PodDisruptionBudget": (("PodDisruptionBudget is an object to define the max "
                                   "disruption that can be caused to a collection of pods"), {
        "spec": ("policy.PodDisruptionBudgetSpec", ("Specification of the desired behavior of "
                 "the PodDisruptionBudget.")),
        "status": ("policy.PodDisruptionBudgetStatus", ("Most recently observed status of the "
                   "PodDisruptionBudget.")),
    }),
    "policy.PodDisruptionBudgetSpec": (("PodDisruptionBudgetSpec is a description of a "
                                       "PodDisruptionBudget."), {
        "minAvailable": ("IntOrString", ("An eviction is allowed if at least \"minAvailable\" "
                         "pods selected by \"selector\" will still be available after the "
                         "eviction, i.e. even in the absence of the evicted pod.  So for "
                         "example you can prevent all voluntary evictions by specifying "
                         "\"100%\".")),
        "selector": ("LabelSelector", ("Label query over pods whose evictions are managed by "
                     "the disruption budget. A null selector will match no pods, while an "
                     "empty ({}) selector will select all pods within the namespace."), None,
                     "replace"),
        "maxUnavailable": ("IntOrString", ("An eviction is allowed if at most "
                           "\"maxUnavailable\" pods selected by \"selector\" are unavailable "
                           "after the eviction, i.e. even in absence of the evicted pod. For "
                           "example, one can prevent all voluntary evictions by specifying 0. "
                           "This is a mutually exclusive setting with \"minAvailable\".")),
        "unhealthyPodEvictionPolicy": ("string", ("UnhealthyPodEvictionPolicy defines the "
                                       "criteria for when unhealthy pods should be considered "
                                       "for eviction. Valid policies are IfHealthyBudget and "
                                       "AlwaysAllow. If no policy is specified, the default "
                                       "behavior will be used, which corresponds to the "
                                       "IfHealthyBudget policy.")),
    }),
    "policy.PodDisruptionBudgetStatus": (("PodDisruptionBudgetStatus represents information "
                                         "about the status of a PodDisruptionBudget. Status "
                                         "may trail the actual state of a system."), {
        "observedGeneration": ("int64", ("Most recent generation observed when updating this "
                               "PDB status. DisruptionsAllowed and other status information "
                               "is valid only if observedGeneration equals to PDB's object "
                               "generation.")),
        "disruptedPods": ("{Time", ("DisruptedPods contains information about pods whose "
                          "eviction was processed by the API server eviction subresource "
                          "handler but has not yet been observed by the PodDisruptionBudget "
                          "controller. A pod will be in this map from the time when the API "
                          "server processed the eviction request to the time when the pod is "
                          "seen by PDB controller as having been marked for deletion (or "
                          "after a timeout). The key in the map is the name of the pod and "
                          "the value is the time when the API server processed the eviction "
                          "request.")),
        "disruptionsAllowed": ("int32", ("Number of pod disruptions that are currently "
                               "allowed.")),
        "currentHealthy": ("int32", "current number of healthy pods"),
        "desiredHealthy": ("int32", "minimum desired number of healthy pods"),
        "expectedPods": ("int32", "total number of pods counted by this disruption budget"),
        "conditions": ("[meta.Condition", ("Conditions contain conditions for PDB. The "
                       "disruption controller sets the DisruptionAllowed condition: "
                       "SyncFailed, InsufficientPods or SufficientPods."), "type"),
    }, ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")),
    "policy.Eviction": (("Eviction evicts a pod from its node subject to certain policies and "
                        "safety constraints. This is a subresource of Pod.  A request to "
                        "cause such an eviction is created by POSTing to "
                        ".../pods/<pod name>/evictions."), {}),
}
