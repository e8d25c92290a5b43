"""rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding, ClusterRoleBinding.

Kubernetes pieces: pkg/apis/rbac/validation (ValidateRole, ValidateClusterRole,
ValidateRoleBinding, ValidateClusterRoleBinding and their Update forms, ValidatePolicyRule,
ValidateRoleBindingSubject) and the defaults are api/rbac.py's. Names are path
segments (ValidateRBACName); a binding's roleRef never changes.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.errors import invalid, not_supported, required
from minikube_py.api.rbac import GROUP, SUBJECT_KINDS
from minikube_py.api.validation.common import (
    name_is_dns_subdomain,
    path_segment_name,
    semantic_equal,
    validate_label_selector,
)
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import (
    Errs,
    get_dict,
    get_str,
    get_str_list,
    iter_dicts,
)


def validate_policy_rule(rule: dict[str, Any], namespaced: bool, path: str, errs: Errs) -> None:
    """ValidatePolicyRule."""
    verbs = get_str_list(rule, "verbs", path, errs)
    urls = get_str_list(rule, "nonResourceURLs", path, errs)
    groups = get_str_list(rule, "apiGroups", path, errs)
    resources = get_str_list(rule, "resources", path, errs)
    names = get_str_list(rule, "resourceNames", path, errs)
    if not verbs:
        errs.append(required(f"{path}.verbs", "verbs must contain at least one value"))
    if urls:
        if namespaced:
            errs.append(invalid(f"{path}.nonResourceURLs", urls,
                                "namespaced rules cannot apply to non-resource URLs"))
        if groups or resources or names:
            errs.append(invalid(f"{path}.nonResourceURLs", urls,
                                "rules cannot apply to both regular resources and "
                                "non-resource URLs"))
        return
    if not groups:
        errs.append(required(f"{path}.apiGroups",
                             "resource rules must supply at least one api group"))
    if not resources:
        errs.append(required(f"{path}.resources",
                             "resource rules must supply at least one resource"))


def _rules(role: dict[str, Any], namespaced: bool, errs: Errs) -> None:
    for _, rule, path in iter_dicts(role, "rules", "", errs):
        validate_policy_rule(rule, namespaced, path, errs)


def validate_role(role: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(role, True, path_segment_name, errs)
    _rules(role, True, errs)


def _cluster_role_body(role: dict[str, Any], errs: Errs) -> None:
    _rules(role, False, errs)
    aggregation = get_dict(role, "aggregationRule", "", errs)
    if aggregation is not None:
        selectors = list(iter_dicts(aggregation, "clusterRoleSelectors", "aggregationRule", errs))
        if not selectors:
            errs.append(required("aggregationRule.clusterRoleSelectors",
                                 "at least one clusterRoleSelector required if aggregationRule "
                                 "is non-nil"))
        for _, selector, path in selectors:
            validate_label_selector(selector, path, errs)


def validate_cluster_role(role: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(role, False, path_segment_name, errs)
    _cluster_role_body(role, errs)


def validate_subject(subject: dict[str, Any], namespaced: bool, path: str, errs: Errs) -> None:
    """ValidateRoleBindingSubject."""
    name = get_str(subject, "name", path, errs)
    kind = get_str(subject, "kind", path, errs)
    group = get_str(subject, "apiGroup", path, errs)
    if not name:
        errs.append(required(f"{path}.name"))
    if kind == "ServiceAccount":
        for msg in (name_is_dns_subdomain(name, False) if name else ()):
            errs.append(invalid(f"{path}.name", name, msg))
        if group:
            errs.append(not_supported(f"{path}.apiGroup", group, [""]))
        if not namespaced and not get_str(subject, "namespace", path, errs):
            errs.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if group != GROUP:
            errs.append(not_supported(f"{path}.apiGroup", group, [GROUP]))
    else:
        errs.append(not_supported(f"{path}.kind", kind, SUBJECT_KINDS))


def _binding_body(binding: dict[str, Any], namespaced: bool, errs: Errs) -> None:
    ref = get_dict(binding, "roleRef", "", errs) or {}
    group = get_str(ref, "apiGroup", "roleRef", errs)
    if group != GROUP:
        errs.append(not_supported("roleRef.apiGroup", group, [GROUP]))
    kind = get_str(ref, "kind", "roleRef", errs)
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if kind not in kinds:
        errs.append(not_supported("roleRef.kind", kind, kinds))
    name = get_str(ref, "name", "roleRef", errs)
    if not name:
        errs.append(required("roleRef.name"))
    else:
        for msg in path_segment_name(name, False):
            errs.append(invalid("roleRef.name", name, msg))
    for _, subject, path in iter_dicts(binding, "subjects", "", errs):
        validate_subject(subject, namespaced, path, errs)


def validate_role_binding(binding: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(binding, True, path_segment_name, errs)
    _binding_body(binding, True, errs)


def validate_cluster_role_binding(binding: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(binding, False, path_segment_name, errs)
    _binding_body(binding, False, errs)


def _role_ref_unchanged(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    if not semantic_equal(new.get("roleRef"), old.get("roleRef")):
        errs.append(invalid("roleRef", new.get("roleRef"), "cannot change roleRef"))


def validate_role_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _rules(new, True, errs)


def validate_cluster_role_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _cluster_role_body(new, errs)


def validate_role_binding_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _binding_body(new, True, errs)
    _role_ref_unchanged(new, old, errs)


def validate_cluster_role_binding_update(new: dict[str, Any], old: dict[str, Any],
                                         errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _binding_body(new, False, errs)
    _role_ref_unchanged(new, old, errs)
