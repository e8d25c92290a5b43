"""RBAC: the authorizer over Roles/ClusterRoles and their bindings, the bootstrap policy and
escalation prevention.

Kubernetes pieces: plugin/pkg/auth/authorizer/rbac (rules.py, index.py, authorizer.py),
plugin/pkg/auth/authorizer/rbac/bootstrappolicy (bootstrap.py) and
pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased
(escalation.py).
"""

from __future__ import annotations

from .authorizer import RESOURCES, RBACAuthorizer

__all__ = ["RESOURCES", "RBACAuthorizer"]
