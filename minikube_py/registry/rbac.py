"""Role, ClusterRole, RoleBinding and ClusterRoleBinding as served resources.

Kubernetes pieces: pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}
(strategy.go: no status, no generation, no short names; Roles and RoleBindings namespaced, the cluster kinds
not). Validation is api/validation/rbac.py's, defaults api/rbac.py's. Escalation prevention
(upstream's policybased storage wrappers) needs the requesting user and so runs in the API
server (apiserver/authz/rbac/escalation.py); what the objects *grant* is the RBAC
authorizer's (apiserver/authz/rbac/).
"""

from __future__ import annotations

from ..api.rbac import GROUP
from .strategy import Strategy

ROLES = Strategy(group=GROUP, version="v1", resource="roles", kind="Role", namespaced=True,
                 key_root="roles", spec_fields=())
CLUSTER_ROLES = Strategy(group=GROUP, version="v1", resource="clusterroles", kind="ClusterRole",
                         namespaced=False, key_root="clusterroles",
                         spec_fields=())
ROLE_BINDINGS = Strategy(group=GROUP, version="v1", resource="rolebindings", kind="RoleBinding",
                         namespaced=True, key_root="rolebindings",
                         spec_fields=())
CLUSTER_ROLE_BINDINGS = Strategy(group=GROUP, version="v1", resource="clusterrolebindings",
                                 kind="ClusterRoleBinding", namespaced=False,
                                 key_root="clusterrolebindings",
                                 spec_fields=())

#: what registry/resources.py serves, in upstream's discovery order
STRATEGIES: tuple[Strategy, ...] = (CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES)
