"""The bootstrap RBAC policy, reconciled when the API server starts with RBAC enabled.

Kubernetes pieces: plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go (ClusterRoles(),
ClusterRoleBindings()) and pkg/registry/rbac/rest/storage_rbac.go's post-start hook
`rbac/bootstrap-roles` with pkg/registry/rbac/reconciliation: a missing role or binding is
created; an existing one annotated `rbac.authorization.kubernetes.io/autoupdate: "true"` gets
the missing rules (subjects) added; `"false"` leaves it alone.

As upstream, admin/edit/view are aggregated ClusterRoles (aggregation.py fills their rules)
over system:aggregate-to-{admin,edit,view}, so a ClusterRole labelled
`rbac.authorization.k8s.io/aggregate-to-view: "true"` extends view, edit and admin. An
aggregated role's rules are the controller's: reconciliation only adds its missing selectors.
"""

from __future__ import annotations

from typing import Any

import structlog

from ....api import errors
from ....api.rbac import GROUP

log = structlog.get_logger(component="apiserver.rbac.bootstrap")

Obj = dict[str, Any]
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
BOOTSTRAP_LABEL = {"kubernetes.io/bootstrapping": "rbac-defaults"}

READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "deletecollection", "patch", "update"]
READ_WRITE = READ + WRITE


def _rule(verbs: list[str], groups: list[str], resources: list[str]) -> Obj:
    return {"verbs": sorted(verbs), "apiGroups": groups, "resources": resources}


def _urls(verbs: list[str], urls: list[str]) -> Obj:
    return {"verbs": verbs, "nonResourceURLs": urls}


_VIEW = [
    _rule(READ, [""], ["configmaps", "endpoints", "persistentvolumeclaims",
                       "persistentvolumeclaims/status", "pods", "replicationcontrollers",
                       "replicationcontrollers/scale", "serviceaccounts", "services",
                       "services/status"]),
    _rule(READ, [""], ["bindings", "events", "limitranges", "namespaces/status", "pods/log",
                       "pods/status", "replicationcontrollers/status", "resourcequotas",
                       "resourcequotas/status"]),
    _rule(READ, [""], ["namespaces"]),
    _rule(READ, ["discovery.k8s.io"], ["endpointslices"]),
    _rule(READ, ["apps"], ["controllerrevisions", "daemonsets", "daemonsets/status",
                           "deployments", "deployments/scale", "deployments/status",
                           "replicasets", "replicasets/scale", "replicasets/status",
                           "statefulsets", "statefulsets/scale", "statefulsets/status"]),
    _rule(READ, ["autoscaling"], ["horizontalpodautoscalers",
                                  "horizontalpodautoscalers/status"]),
    _rule(READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
    _rule(READ, ["extensions"], ["daemonsets", "daemonsets/status", "deployments",
                                 "deployments/scale", "deployments/status", "ingresses",
                                 "ingresses/status", "networkpolicies", "replicasets",
                                 "replicasets/scale", "replicasets/status",
                                 "replicationcontrollers/scale"]),
    _rule(READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    _rule(READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
]
_EDIT = [
    _rule(READ, [""], ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets",
                       "services/proxy"]),
    _rule(["impersonate"], [""], ["serviceaccounts"]),
    _rule(WRITE, [""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
    _rule(["create"], [""], ["pods/eviction"]),
    _rule(WRITE, [""], ["configmaps", "events", "persistentvolumeclaims",
                        "replicationcontrollers", "replicationcontrollers/scale", "secrets",
                        "serviceaccounts", "services", "services/proxy"]),
    _rule(["create"], [""], ["serviceaccounts/token"]),
    _rule(WRITE, ["apps"], ["daemonsets", "deployments", "deployments/rollback",
                            "deployments/scale", "replicasets", "replicasets/scale",
                            "statefulsets", "statefulsets/scale"]),
    _rule(WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
    _rule(WRITE, ["batch"], ["cronjobs", "jobs"]),
    _rule(WRITE, ["extensions"], ["daemonsets", "deployments", "deployments/rollback",
                                  "deployments/scale", "ingresses", "networkpolicies",
                                  "replicasets", "replicasets/scale",
                                  "replicationcontrollers/scale"]),
    _rule(WRITE, ["policy"], ["poddisruptionbudgets"]),
    _rule(WRITE, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
    _rule(READ_WRITE, ["coordination.k8s.io"], ["leases"]),
]
_ADMIN = [
    _rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
    _rule(READ_WRITE, [GROUP], ["rolebindings", "roles"]),
]
_PUBLIC_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]

_AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"

#: name -> rules of the bootstrap ClusterRoles (aggregated ones: AGGREGATED)
CLUSTER_ROLES: dict[str, list[Obj]] = {
    "cluster-admin": [_rule(["*"], ["*"], ["*"]), _urls(["*"], ["*"])],
    "admin": [],
    "edit": [],
    "view": [],
    "system:aggregate-to-admin": _ADMIN,
    "system:aggregate-to-edit": _EDIT,
    "system:aggregate-to-view": _VIEW,
    "system:discovery": [_urls(["get"], ["/api", "/api/*", "/apis", "/apis/*", "/healthz",
                                         "/livez", "/openapi", "/openapi/*", "/readyz",
                                         "/version", "/version/"])],
    "system:basic-user": [
        _rule(["create"], ["authorization.k8s.io"],
              ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
        _rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"]),
    ],
    "system:public-info-viewer": [_urls(["get"], _PUBLIC_URLS)],
    "system:monitoring": [_urls(["get"], ["/healthz", "/healthz/*", "/livez", "/livez/*",
                                          "/metrics", "/metrics/slis", "/readyz",
                                          "/readyz/*"])],
    "system:service-account-issuer-discovery": [_urls(["get"], [
        "/.well-known/openid-configuration", "/.well-known/openid-configuration/",
        "/openid/v1/jwks", "/openid/v1/jwks/"])],
    "system:auth-delegator": [
        _rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
        _rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
    ],
}
#: aggregated role -> the label value its selector requires (`aggregate-to-<x>: "true"`)
AGGREGATED = {"admin": "admin", "edit": "edit", "view": "view"}
#: role -> the aggregate-to labels it carries (so it is part of the roles named)
_AGGREGATE_LABELS = {
    "edit": ("admin",), "view": ("edit",),
    "system:aggregate-to-admin": ("admin",),
    "system:aggregate-to-edit": ("edit",),
    "system:aggregate-to-view": ("view",),
}

#: name -> groups of the bootstrap ClusterRoleBindings (each binds the role of its name)
CLUSTER_ROLE_BINDINGS: dict[str, list[str]] = {
    "cluster-admin": ["system:masters"],
    "system:discovery": ["system:authenticated"],
    "system:basic-user": ["system:authenticated"],
    "system:public-info-viewer": ["system:authenticated", "system:unauthenticated"],
    "system:monitoring": ["system:monitoring"],
    "system:service-account-issuer-discovery": ["system:serviceaccounts"],
}


def _metadata(name: str) -> Obj:
    labels = dict(BOOTSTRAP_LABEL)
    labels.update({f"{_AGGREGATE}{to}": "true" for to in _AGGREGATE_LABELS.get(name, ())})
    return {"name": name, "labels": labels, "annotations": {AUTOUPDATE: "true"}}


def cluster_roles() -> list[Obj]:
    roles = []
    for name, rules in CLUSTER_ROLES.items():
        role: Obj = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                     "metadata": _metadata(name), "rules": [dict(r) for r in rules]}
        if name in AGGREGATED:
            role["aggregationRule"] = {"clusterRoleSelectors": [
                {"matchLabels": {f"{_AGGREGATE}{AGGREGATED[name]}": "true"}}]}
        roles.append(role)
    return roles


def cluster_role_bindings() -> list[Obj]:
    return [{"apiVersion": f"{GROUP}/v1", "kind": "ClusterRoleBinding",
             "metadata": _metadata(name),
             "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": name},
             "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups]}
            for name, groups in CLUSTER_ROLE_BINDINGS.items()]


def _items(obj: Obj, field: str) -> list[Any]:
    """The list `field` reconciles: rules/subjects, or an aggregationRule's selectors."""
    value = obj.get(field)
    if field == "aggregationRule":
        value = value.get("clusterRoleSelectors") if isinstance(value, dict) else None
    return value if isinstance(value, list) else []


def _missing(field: str, have: Obj, want: Obj) -> list[Any]:
    current = _items(have, field)
    return [item for item in _items(want, field) if item not in current]


async def _reconcile(registry: Any, wanted: Obj, field: str) -> str:
    """Create `wanted`, or add its missing `field` items when autoupdate allows; returns
    what was done ("created", "updated" or "")."""
    name = wanted["metadata"]["name"]
    try:
        current = await registry.get("", name)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
        try:
            await registry.create("", wanted)
        except errors.StatusError as exc2:
            if exc2.code != 409:
                raise
            return ""
        return "created"
    annotations = (current.get("metadata") or {}).get("annotations") or {}
    if annotations.get(AUTOUPDATE) == "false" or not _missing(field, current, wanted):
        return ""

    def add_missing(latest: Obj | None) -> Obj:
        if latest is None:
            return wanted
        merged = [*_items(latest, field), *_missing(field, latest, wanted)]
        if field == "aggregationRule":
            latest[field] = {"clusterRoleSelectors": merged}
        else:
            latest[field] = merged
        return latest

    await registry.update("", name, add_missing)
    return "updated"


async def reconcile(cluster_roles_registry: Any, bindings_registry: Any) -> dict[str, str]:
    """The post-start hook: roles first (bindings refer to them). Returns name -> action for
    what changed."""
    done: dict[str, str] = {}
    for role in cluster_roles():
        field = "aggregationRule" if "aggregationRule" in role else "rules"
        action = await _reconcile(cluster_roles_registry, role, field)
        if action:
            done[f"clusterrole/{role['metadata']['name']}"] = action
    for binding in cluster_role_bindings():
        action = await _reconcile(bindings_registry, binding, "subjects")
        if action:
            done[f"clusterrolebinding/{binding['metadata']['name']}"] = action
    if done:
        log.info("bootstrap RBAC policy reconciled", changed=done)
    return done
