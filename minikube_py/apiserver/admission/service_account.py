"""ServiceAccount admission: every pod runs as a service account that exists, with its token.

Kubernetes v1.0 piece: plugin/pkg/admission/serviceaccount. On pod create: mirror pods (the
`kubernetes.io/config.mirror` annotation) are left alone; an empty spec.serviceAccountName
becomes "default" (the deprecated spec.serviceAccount mirrors it); the named account must exist
in the namespace, else 403 Forbidden `error looking up service account <ns>/<name>: ...`
(controllers retry; the service accounts controller creates "default" in every namespace).

Unless the pod's (else the account's) automountServiceAccountToken is false, 1.31's token
volume is added as upstream's plugin adds it: a projected volume `kube-api-access-<5 random>`
(a bound token expiring in 3607 s, the `kube-root-ca.crt` ConfigMap's ca.crt — published in
every namespace by the root-ca-cert-publisher controller — and the namespace from the downward
API), mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount in every init and app
container that has nothing mounted there yet.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...api.meta import generate_name

from ...api import errors
from .chain import Attributes
from .denial import forbidden

GetServiceAccount = Callable[[str, str], Awaitable[dict[str, Any]]]
DEFAULT_ACCOUNT = "default"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
VOLUME_PREFIX = "kube-api-access-"
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
#: upstream WarnOnlyBoundTokenExpirationSeconds: an hour and a bit, so stale-token use shows
TOKEN_EXPIRATION_SECONDS = 3607
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"


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


def token_volume(name: str) -> dict[str, Any]:
    """upstream TokenVolumeSource: token, CA and namespace, defaultMode 0644 set explicitly."""
    return {"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS,
                                 "path": "token"}},
        {"configMap": {"name": ROOT_CA_CONFIGMAP,
                       "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}}


def should_automount(account: dict[str, Any], pod: dict[str, Any]) -> bool:
    """The pod's automountServiceAccountToken wins over the account's; default true."""
    for holder in (pod.get("spec") or {}, account):
        value = holder.get("automountServiceAccountToken")
        if isinstance(value, bool):
            return value
    return True


def mount_token(pod: dict[str, Any]) -> None:
    """upstream mountServiceAccountToken: reuse an existing kube-api-access-* volume or make
    one; mount it in each init and app container without a mount at MOUNT_PATH."""
    spec = pod["spec"]
    volumes = spec.get("volumes")
    if volumes is not None and not isinstance(volumes, list):
        return  # validation reports it
    existing = next((v["name"] for v in volumes or () if isinstance(v, dict)
                     and str(v.get("name", "")).startswith(VOLUME_PREFIX)), None)
    name = existing or generate_name(VOLUME_PREFIX)
    needed = False
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or ():
            if not isinstance(container, dict):
                continue
            mounts = container.get("volumeMounts")
            if mounts is None:
                mounts = container["volumeMounts"] = []
            if not isinstance(mounts, list) or any(
                    isinstance(m, dict) and m.get("mountPath") == MOUNT_PATH for m in mounts):
                continue
            mounts.append({"name": name, "readOnly": True, "mountPath": MOUNT_PATH})
            needed = True
    if needed and existing is None:
        spec["volumes"] = [*(volumes or ()), token_volume(name)]


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
            service_account = await self._get(attrs.namespace, account)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
            raise forbidden(attrs, f"error looking up service account {attrs.namespace}/"
                            f"{account}: {exc.message}") from None
        if should_automount(service_account, attrs.obj):
            mount_token(attrs.obj)
