"""apiregistration.k8s.io/v1 APIService.

Kubernetes piece: k8s.io/kube-aggregator's pkg/apis/apiregistration/validation
(ValidateAPIService, ValidateAPIServiceUpdate, ValidateAPIServiceStatus). The name must be
`<version>.<group>` and a valid path segment; only `v1` may have an empty (the legacy) group;
priorities are in range; a local APIService (no `spec.service`) has no `caBundle` and no
`insecureSkipTLSVerify`; a service reference names a namespace and a service and a valid port;
`insecureSkipTLSVerify` excludes a `caBundle`. Condition statuses are True, False or Unknown.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from minikube_py.api.errors import invalid, not_supported, required
from minikube_py.api.naming import is_dns1035_label, is_dns1123_subdomain
from minikube_py.api.validation.common import path_segment_name
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import (
    Errs,
    get_bool,
    get_dict,
    get_int,
    get_list,
    get_str,
    index,
)

_CONDITION_STATUSES = ("True", "False", "Unknown")


def _ca_bundle_length(value: str, errs: Errs) -> int:
    """Decoded length of `caBundle` (base64 on the wire, []byte upstream)."""
    try:
        return len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        errs.append(invalid("spec.caBundle", value, "illegal base64 data"))
        return 0


def validate_apiservice(obj: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(obj, "spec", "", errs) or {}
    group = get_str(spec, "group", "spec", errs)
    version = get_str(spec, "version", "spec", errs)
    required_name = f"{version}.{group}"

    def name_rule(name: str, prefix: bool) -> list[str]:
        failures = path_segment_name(name, prefix)
        if failures:
            return failures
        return [] if name == required_name else [
            f'must be `spec.version+"."+spec.group`: "{required_name}"']

    validate_object_meta(obj, False, name_rule, errs)
    if not group and version != "v1":
        errs.append(required("spec.group", "only v1 may have an empty group and it better be "
                                           "legacy kube"))
    if group:
        errs += [invalid("spec.group", group, msg) for msg in is_dns1123_subdomain(group)]
    errs += [invalid("spec.version", version, msg) for msg in is_dns1035_label(version)]
    group_min = get_int(spec, "groupPriorityMinimum", "spec", errs) or 0
    if not 0 < group_min <= 20000:
        errs.append(invalid("spec.groupPriorityMinimum", group_min,
                            "must be positive and less than 20000"))
    version_priority = get_int(spec, "versionPriority", "spec", errs) or 0
    if not 0 < version_priority <= 1000:
        errs.append(invalid("spec.versionPriority", version_priority,
                            "must be positive and less than 1000"))
    bundle = get_str(spec, "caBundle", "spec", errs)
    bundle_length = _ca_bundle_length(bundle, errs) if bundle else 0
    insecure = get_bool(spec, "insecureSkipTLSVerify", "spec", errs) is True
    service = get_dict(spec, "service", "spec", errs)
    if service is None:
        if bundle_length:
            errs.append(invalid("spec.caBundle", f"{bundle_length} bytes",
                                "local APIServices may not have a caBundle"))
        if insecure:
            errs.append(invalid("spec.insecureSkipTLSVerify", True,
                                "local APIServices may not have insecureSkipTLSVerify"))
        return
    if not get_str(service, "namespace", "spec.service", errs):
        errs.append(required("spec.service.namespace", ""))
    if not get_str(service, "name", "spec.service", errs):
        errs.append(required("spec.service.name", ""))
    get_str(service, "path", "spec.service", errs)
    port = get_int(service, "port", "spec.service", errs)
    if port is not None and not 1 <= port <= 65535:
        errs.append(invalid("spec.service.port", port, "port is not valid: must be between 1 "
                                                       "and 65535, inclusive"))
    if insecure and bundle_length:
        errs.append(invalid("spec.insecureSkipTLSVerify", True,
                            "may not be true if caBundle is present"))


def validate_apiservice_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_apiservice(new, errs)
    validate_object_meta_update(new, old, errs)


def validate_apiservice_status_update(new: dict[str, Any], old: dict[str, Any],
                                      errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    status = get_dict(new, "status", "", errs) or {}
    for i, cond in enumerate(get_list(status, "conditions", "status", errs) or ()):
        path = index("status.conditions", i)
        if not isinstance(cond, dict):
            errs.append(invalid(path, cond, "must be an object"))
            continue
        for field in ("type", "reason", "message", "lastTransitionTime"):
            get_str(cond, field, path, errs)
        value = cond.get("status")
        if value not in _CONDITION_STATUSES:
            errs.append(not_supported(f"{path}.status", value, _CONDITION_STATUSES))
