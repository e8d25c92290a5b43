"""ServiceAccount admission: every pod runs as a service account that exists.

Kubernetes v1.0 piece: plugin/pkg/admission/serviceaccount. On pod create: mirror pods (the
`kubernetes.io/config.mirror` annotation) are left alone; an empty spec.serviceAccountName
becomes "default" (the deprecated spec.serviceAccount mirrors it); the named account must exist
in the namespace, else 403 Forbidden `error looking up service account <ns>/<name>: ...`
(controllers retry; the service accounts controller creates "default" in every namespace).
Token secrets are not mounted: this cluster runs no real containers to read them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...api import errors
from .chain import Attributes
from .denial import forbidden

GetServiceAccount = Callable[[str, str], Awaitable[dict[str, Any]]]
DEFAULT_ACCOUNT = "default"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def assign_account(pod: dict[str, Any]) -> str | None:
    """Set the pod's service account name (default "default"); None for mirror pods."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    if MIRROR_ANNOTATION in annotations:
        return None
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return None
    name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_ACCOUNT
    spec["serviceAccountName"] = name
    spec["serviceAccount"] = name
    return name


class ServiceAccount:
    name = "ServiceAccount"

    def __init__(self, get_service_account: GetServiceAccount) -> None:
        self._get = get_service_account

    async def admit(self, attrs: Attributes) -> None:
        if (attrs.operation != "CREATE" or attrs.strategy.resource != "pods"
                or attrs.strategy.group or attrs.subresource or not isinstance(attrs.obj, dict)):
            return
        account = assign_account(attrs.obj)
        if account is None:
            return
        try:
            await self._get(attrs.namespace, account)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
            raise forbidden(attrs, f"error looking up service account {attrs.namespace}/"
                            f"{account}: {exc.message}") from None
