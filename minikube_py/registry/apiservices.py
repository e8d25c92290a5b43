"""APIServices (apiregistration.k8s.io/v1): the kind that plugs another API server into ours.

Kubernetes pieces: k8s.io/kube-aggregator's pkg/registry/apiservice (strategy.go: cluster
scope, a status subresource, PrepareForCreate drops the client's status; etcd.go's table
convertor: NAME, SERVICE, AVAILABLE, AGE), pkg/apis/apiregistration/validation (the name is
`<version>.<group>`, priorities in range, a local APIService has no caBundle) and
v1/defaults.go (`spec.service.port` defaults to 443). Pure: the proxy, the autoregistration
of local APIServices and the availability probe live in apiserver/aggregator/.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ..api import errors, meta
from ..api.naming import is_dns1035_label, is_dns1123_subdomain
from ..api.validation import CLUSTER_SCOPED
from .strategy import Obj, Strategy, SubresourceSpec

GROUP = "apiregistration.k8s.io"
KIND = "APIService"
AVAILABLE = "Available"
_CONDITION_STATUSES = ("True", "False", "Unknown")


def spec_of(obj: Obj) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def service_of(obj: Obj) -> dict[str, Any] | None:
    """`spec.service`, or None for a local APIService (served by this process)."""
    service = spec_of(obj).get("service")
    return service if isinstance(service, dict) else None


def default_apiservice(obj: Obj) -> None:
    """Upstream SetDefaults_ServiceReference: port 443."""
    service = service_of(obj)
    if service is not None and service.get("port") in (None, 0):
        service["port"] = 443


def _ca_bundle_length(value: Any) -> int:
    if not value:
        return 0
    try:
        return len(base64.b64decode(str(value), validate=True))
    except (binascii.Error, ValueError):
        return -1


def _int_field(spec: dict[str, Any], field: str) -> int:
    value = spec.get(field)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def validate_apiservice(obj: Obj) -> list[errors.FieldError]:
    """Upstream ValidateAPIService (metadata's generic rules run in api/validation)."""
    errs: list[errors.FieldError] = []
    spec = spec_of(obj)
    group, version = spec.get("group") or "", spec.get("version") or ""
    if not isinstance(group, str) or not isinstance(version, str):
        return [errors.invalid("spec", spec, "group and version must be strings")]
    name = (obj.get("metadata") or {}).get("name", "")
    required_name = f"{version}.{group}"
    if name and name != required_name:
        errs.append(errors.invalid("metadata.name", name,
                                   f'must be `spec.version+"."+spec.group`: "{required_name}"'))
    if not group and version != "v1":
        errs.append(errors.required("spec.group", "only v1 may have an empty group and it "
                                                  "better be legacy kube"))
    if group:
        errs += [errors.invalid("spec.group", group, msg) for msg in is_dns1123_subdomain(group)]
    errs += [errors.invalid("spec.version", version, msg) for msg in is_dns1035_label(version)]
    group_min = _int_field(spec, "groupPriorityMinimum")
    if not 0 < group_min <= 20000:
        errs.append(errors.invalid("spec.groupPriorityMinimum", group_min,
                                   "must be positive and less than 20000"))
    version_priority = _int_field(spec, "versionPriority")
    if not 0 < version_priority <= 1000:
        errs.append(errors.invalid("spec.versionPriority", version_priority,
                                   "must be positive and less than 1000"))
    bundle = _ca_bundle_length(spec.get("caBundle"))
    if bundle < 0:
        errs.append(errors.invalid("spec.caBundle", spec.get("caBundle"),
                                   "illegal base64 data"))
    insecure = spec.get("insecureSkipTLSVerify") is True
    service = service_of(obj)
    if service is None:
        if bundle > 0:
            errs.append(errors.invalid("spec.caBundle", f"{bundle} bytes",
                                       "local APIServices may not have a caBundle"))
        if insecure:
            errs.append(errors.invalid("spec.insecureSkipTLSVerify", True,
                                       "local APIServices may not have insecureSkipTLSVerify"))
        return errs
    if not service.get("namespace"):
        errs.append(errors.required("spec.service.namespace", ""))
    if not service.get("name"):
        errs.append(errors.required("spec.service.name", ""))
    port = service.get("port")
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        errs.append(errors.invalid("spec.service.port", port, "port is not valid: must be "
                                                              "between 1 and 65535, inclusive"))
    if insecure and bundle > 0:
        errs.append(errors.invalid("spec.insecureSkipTLSVerify", True,
                                   "may not be true if caBundle is present"))
    return errs


def validate_status(obj: Obj) -> list[errors.FieldError]:
    """Upstream ValidateAPIServiceStatus: each condition's status is True, False or Unknown."""
    errs: list[errors.FieldError] = []
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    for i, cond in enumerate(status.get("conditions") or ()):
        value = cond.get("status") if isinstance(cond, dict) else None
        if value not in _CONDITION_STATUSES:
            errs.append(errors.not_supported(f"status.conditions[{i}].status", value,
                                             _CONDITION_STATUSES))
    return errs


def _check(obj: Obj) -> None:
    default_apiservice(obj)
    errs = validate_apiservice(obj)
    if errs:
        raise errors.invalid_object(KIND, (obj.get("metadata") or {}).get("name", ""), errs,
                                    GROUP)


async def _prepare_create(registry: Any, obj: Obj) -> None:
    """PrepareForCreate: the availability controller owns the status."""
    obj["status"] = {}
    _check(obj)


async def _prepare_update(registry: Any, new: Obj, old: Obj) -> None:
    if new.get("spec") is not None or old.get("spec") is not None:
        _check(new)
    errs = validate_status(new)
    if errs:
        raise errors.invalid_object(KIND, new["metadata"].get("name", ""), errs, GROUP)


APISERVICES = Strategy(
    group=GROUP, version="v1", resource="apiservices", kind=KIND, namespaced=False,
    key_root="apiregistration.k8s.io/apiservices", categories=("api-extensions",),
    subresources=(SubresourceSpec("status", ("get", "patch", "update")),), has_status=True,
    prepare_create=_prepare_create, prepare_update=_prepare_update, validation=CLUSTER_SCOPED,
)


# -- conditions --------------------------------------------------------------------------------
def condition(obj: Obj, type_: str = AVAILABLE) -> dict[str, Any] | None:
    status = obj.get("status")
    for cond in (status.get("conditions") or ()) if isinstance(status, dict) else ():
        if isinstance(cond, dict) and cond.get("type") == type_:
            return cond
    return None


def is_available(obj: Obj) -> bool:
    """Upstream IsAPIServiceConditionTrue(apiService, Available)."""
    cond = condition(obj)
    return cond is not None and cond.get("status") == "True"


def set_available(obj: Obj, status: str, reason: str, message: str) -> None:
    """Upstream SetAPIServiceCondition: lastTransitionTime moves only when the status does."""
    conditions = obj.setdefault("status", {}).setdefault("conditions", [])
    for cond in conditions:
        if cond.get("type") == AVAILABLE:
            if cond.get("status") != status:
                cond["lastTransitionTime"] = meta.now_rfc3339()
            cond.update(status=status, reason=reason, message=message)
            return
    conditions.append({"type": AVAILABLE, "status": status,
                       "lastTransitionTime": meta.now_rfc3339(), "reason": reason,
                       "message": message})

