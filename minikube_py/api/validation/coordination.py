"""coordination.k8s.io/v1 Lease.

Kubernetes piece: pkg/apis/coordination/validation (ValidateLease, ValidateLeaseUpdate,
ValidateLeaseSpec) as 1.31's lease strategy calls them. A Lease is a small lock record (node
heartbeats, leader election): the only rules are a positive leaseDurationSeconds and a
non-negative leaseTransitions; the MicroTime fields are checked when the body is decoded
(api/timefields.py). `strategy`/`preferredHolder` belong to the CoordinatedLeaderElection
alpha gate, off by default in 1.31: the registry drops them before validation
(registry/coordination.py), so they are not checked here.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.errors import invalid
from minikube_py.api.validation.common import name_is_dns_subdomain
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import Errs, get_dict, get_int, get_str


def validate_lease_spec(lease: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(lease, "spec", "", errs) or {}
    get_str(spec, "holderIdentity", "spec", errs)
    duration = get_int(spec, "leaseDurationSeconds", "spec", errs)
    if duration is not None and duration <= 0:
        errs.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = get_int(spec, "leaseTransitions", "spec", errs)
    if transitions is not None and transitions < 0:
        errs.append(invalid("spec.leaseTransitions", transitions,
                            "must be greater than or equal to 0"))


def validate_lease(lease: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(lease, True, name_is_dns_subdomain, errs)
    validate_lease_spec(lease, errs)


def validate_lease_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    validate_lease_spec(new, errs)
