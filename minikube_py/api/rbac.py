"""Shared names and defaults of rbac.authorization.k8s.io/v1.

Kubernetes piece: pkg/apis/rbac (GroupName, the subject kinds) and pkg/apis/rbac/v1/defaults.go
(SetDefaults_RoleBinding, SetDefaults_ClusterRoleBinding, SetDefaults_Subject): a binding's
roleRef.apiGroup and a User or Group subject's apiGroup default to the RBAC group.
"""

from __future__ import annotations

from typing import Any

GROUP = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")
#: serviceaccount.MakeUsername's prefix: system:serviceaccount:<namespace>:<name>
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


def service_account_username(namespace: str, name: str) -> str:
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def default_binding(binding: dict[str, Any]) -> None:
    """Default a RoleBinding or ClusterRoleBinding in place (wrong types are left for
    validation to report)."""
    ref = binding.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    subjects = binding.get("subjects")
    for subject in subjects if isinstance(subjects, list) else ():
        if isinstance(subject, dict) and not subject.get("apiGroup") \
                and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = GROUP
