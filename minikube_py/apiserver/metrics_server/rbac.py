"""Who may read resource metrics: metrics-server's `system:aggregated-metrics-reader`.

Upstream this ClusterRole is not kube-apiserver bootstrap policy: metrics-server's install
manifest (components.yaml) creates it, labelled to aggregate into `view`, `edit` and `admin`,
so anyone who may view a namespace may `kubectl top` it. The built-in metrics-server creates
it at start (when RBAC is on) and never touches it afterwards: an existing one, edited or
not, is left as it is, as `kubectl apply` of the manifest would only be run by an admin.
"""

from __future__ import annotations

from typing import Any

from ...api import errors

NAME = "system:aggregated-metrics-reader"
READER: dict[str, Any] = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
    "metadata": {"name": NAME, "labels": {
        "k8s-app": "metrics-server",
        "rbac.authorization.k8s.io/aggregate-to-admin": "true",
        "rbac.authorization.k8s.io/aggregate-to-edit": "true",
        "rbac.authorization.k8s.io/aggregate-to-view": "true"}},
    "rules": [{"apiGroups": ["metrics.k8s.io"], "resources": ["pods", "nodes"],
               "verbs": ["get", "list", "watch"]}],
}


async def ensure_reader_role(cluster_roles: Any) -> bool:
    """Create the role if it is missing; True when this call created it."""
    try:
        await cluster_roles.get("", NAME)
        return False
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
    try:
        await cluster_roles.create("", dict(READER))
    except errors.StatusError as exc:
        if exc.code != 409:
            raise
        return False
    return True
