"""APIServices (apiregistration.k8s.io/v1): the kind that plugs another API server into ours.

Kubernetes pieces: k8s.io/kube-aggregator's pkg/registry/apiservice (strategy.go: cluster
scope, a status subresource, PrepareForCreate drops the client's status; etcd.go's table
convertor: NAME, SERVICE, AVAILABLE, AGE, in api/tables.py) and v1/defaults.go
(`spec.service.port` defaults to 443); the validation is api/validation/apiservice.py, keyed by
kind like every built-in's. Pure: the proxy, the autoregistration of local APIServices and the
availability probe live in apiserver/aggregator/.
"""

from __future__ import annotations

from typing import Any

from ..api import meta
from .strategy import Obj, Strategy, SubresourceSpec

GROUP = "apiregistration.k8s.io"
KIND = "APIService"
AVAILABLE = "Available"


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


async def _prepare_create(registry: Any, obj: Obj) -> None:
    """PrepareForCreate: the availability controller owns the status."""
    obj["status"] = {}
    default_apiservice(obj)


async def _prepare_update(registry: Any, new: Obj, old: Obj) -> None:
    default_apiservice(new)


APISERVICES = Strategy(
    group=GROUP, version="v1", resource="apiservices", kind=KIND, namespaced=False,
    key_root="apiregistration.k8s.io/apiservices", categories=("api-extensions",),
    subresources=(SubresourceSpec("status", ("get", "patch", "update")),), has_status=True,
    prepare_create=_prepare_create, prepare_update=_prepare_update,
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

