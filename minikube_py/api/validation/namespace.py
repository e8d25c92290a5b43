"""Namespaces: a DNS-1123 label name, valid finalizers, and a phase that follows deletion.

Kubernetes pieces: pkg/apis/core/validation (ValidateNamespace, validateFinalizerName,
ValidateNamespaceUpdate, ValidateNamespaceStatusUpdate). Namespaces are cluster-scoped, so a
`metadata.namespace` on one is refused.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.errors import invalid
from minikube_py.api.validation.common import (
    name_is_dns_label,
    sub,
    validate_qualified_name,
)
from minikube_py.api.validation.meta import (
    validate_kube_finalizer_name,
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import Errs, get_dict, get_str, get_str_list


def validate_namespace(namespace: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(namespace, False, name_is_dns_label, errs)
    spec = get_dict(namespace, "spec", "", errs) or {}
    for finalizer in get_str_list(spec, "finalizers", "spec", errs):
        validate_qualified_name(finalizer, "spec.finalizers", errs)
        validate_kube_finalizer_name(finalizer, "spec.finalizers", errs)


def validate_namespace_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_namespace(new, errs)
    validate_object_meta_update(new, old, errs)


def validate_namespace_status_update(new: dict[str, Any], old: dict[str, Any],
                                     errs: Errs) -> None:
    """The phase is Active until deletion starts and Terminating after."""
    validate_object_meta_update(new, old, errs)
    phase = get_str(get_dict(new, "status", "", errs), "phase", "status", errs)
    if not sub(new, "metadata", "deletionTimestamp"):
        if phase != "Active":
            errs.append(invalid("status.Phase", phase,
                                "may only be 'Active' if `deletionTimestamp` is empty"))
    elif phase != "Terminating":
        errs.append(invalid("status.Phase", phase,
                            "may only be 'Terminating' if `deletionTimestamp` is not empty"))
