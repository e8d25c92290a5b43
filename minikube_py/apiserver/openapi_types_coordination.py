"""Schema table for coordination.k8s.io/v1 Lease (see openapi_schemas.py for the notation).

Kubernetes piece: k8s.io/api/coordination/v1 types.go doc comments, as 1.31 publishes them, so
`kubectl explain lease.spec` reads upstream's words (the protobuf description alone would only
give each field's shape).
"""

from __future__ import annotations

RAW: dict = {}
KINDS = frozenset({"coordination.Lease"})
UNLISTED: frozenset[str] = frozenset()

TYPES = {
    "coordination.Lease": ("Lease defines a lease concept.", {
        "spec": ("coordination.LeaseSpec", ("spec contains the specification of the Lease. More "
                 "info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
                 "api-conventions.md#spec-and-status")),
    }),
    "coordination.LeaseSpec": ("LeaseSpec is a specification of a Lease.", {
        "holderIdentity": ("string", ("holderIdentity contains the identity of the holder of a "
                           "current lease. If Coordinated Leader Election is used, the holder "
                           "identity must be equal to the elected LeaseCandidate.metadata.name "
                           "field.")),
        "leaseDurationSeconds": ("int32", ("leaseDurationSeconds is a duration that candidates "
                                 "for a lease need to wait to force acquire it. This is "
                                 "measured against the time of last observed renewTime.")),
        "acquireTime": ("MicroTime", ("acquireTime is a time when the current lease was "
                        "acquired.")),
        "renewTime": ("MicroTime", ("renewTime is a time when the current holder of a lease "
                      "has last updated the lease.")),
        "leaseTransitions": ("int32", ("leaseTransitions is the number of transitions of a "
                             "lease between holders.")),
        "strategy": ("string", ("Strategy indicates the strategy for picking the leader for "
                     "coordinated leader election. If the field is not specified, there is no "
                     "active coordination for this lease. (Alpha) Using this field requires "
                     "the CoordinatedLeaderElection feature gate to be enabled.")),
        "preferredHolder": ("string", ("PreferredHolder signals to a lease holder that the "
                            "lease has a more optimal holder and should be given up. This "
                            "field can only be set if Strategy is also set.")),
    }),
}
