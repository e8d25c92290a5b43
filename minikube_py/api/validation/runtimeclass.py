"""node.k8s.io/v1 RuntimeClass.

Kubernetes piece: pkg/apis/node/validation (ValidateRuntimeClass, ValidateRuntimeClassUpdate).
A RuntimeClass names a CRI handler (a DNS label, immutable once set), may charge every pod that
uses it a fixed `overhead.podFixed` (validated as container limits are) and may steer those pods
with `scheduling.nodeSelector` and `scheduling.tolerations` (unique by key, operator, value and
effect). The RuntimeClass admission plugin applies the last three to pods.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.errors import duplicate
from minikube_py.api.validation.common import (
    name_is_dns_label,
    name_is_dns_subdomain,
    sub,
    validate_immutable,
    validate_label_map,
    validate_name,
)
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.resources import validate_requirements
from minikube_py.api.validation.scheduling import validate_tolerations
from minikube_py.api.validation.typed import Errs, get_dict, get_str, iter_dicts

_TOLERATION_KEY = ("key", "operator", "value", "effect")


def _scheduling(scheduling: dict[str, Any], errs: Errs) -> None:
    validate_label_map(scheduling, "nodeSelector", "scheduling", errs)
    validate_tolerations(scheduling, "scheduling", errs)
    seen: set[tuple] = set()
    for _, toleration, path in iter_dicts(scheduling, "tolerations", "scheduling", errs):
        list_key = tuple(toleration.get(name) or "" for name in _TOLERATION_KEY)
        if list_key in seen:
            errs.append(duplicate(path, toleration))
        seen.add(list_key)


def validate_runtime_class(rc: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(rc, False, name_is_dns_subdomain, errs)
    validate_name(get_str(rc, "handler", "", errs), "handler", errs, name_is_dns_label)
    overhead = get_dict(rc, "overhead", "", errs)
    if overhead is not None:
        pod_fixed = get_dict(overhead, "podFixed", "overhead", errs)
        if pod_fixed is not None:
            validate_requirements({"limits": pod_fixed}, "overhead", errs)
    scheduling = get_dict(rc, "scheduling", "", errs)
    if scheduling is not None:
        _scheduling(scheduling, errs)


def validate_runtime_class_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """The strategy's ValidateUpdate: the whole class again, plus metadata and an immutable
    handler."""
    validate_runtime_class(new, errs)
    validate_object_meta_update(new, old, errs)
    validate_immutable(sub(new, "handler"), sub(old, "handler"), "handler", errs)


CREATE = {"RuntimeClass": validate_runtime_class}
UPDATE = {"RuntimeClass": validate_runtime_class_update}
