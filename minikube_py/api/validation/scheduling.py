"""The scheduling vocabulary: tolerations, taints, node and pod affinity, topology spread.

Kubernetes pieces: pkg/apis/core/validation (ValidateTolerations, validateNodeTaints,
validateTaintEffect, validateAffinity, ValidateNodeSelector, ValidateNodeSelectorRequirement,
ValidatePreferredSchedulingTerms, validatePodAffinityTerm, validateTopologySpreadConstraints).
The scheduler trusts these fields once stored, so malformed operators or weights are refused
here rather than discovered by a predicate.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api import naming
from minikube_py.api.errors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from minikube_py.api.validation.common import (
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_label_selector,
    validate_qualified_name,
)
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_dict,
    get_int,
    get_str,
    get_str_list,
    index,
    iter_dicts,
)

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES = ("Honor", "Ignore")


def validate_tolerations(spec: dict[str, Any], path: str, errs: Errs) -> None:
    for _, tol, tol_path in iter_dicts(spec, "tolerations", path, errs):
        tol_key = get_str(tol, "key", tol_path, errs)
        operator = get_str(tol, "operator", tol_path, errs)
        value = get_str(tol, "value", tol_path, errs)
        effect = get_str(tol, "effect", tol_path, errs)
        seconds = get_int(tol, "tolerationSeconds", tol_path, errs)
        op_path = child(tol_path, "operator")
        if tol_key:
            validate_qualified_name(tol_key, child(tol_path, "key"), errs)
        elif operator != "Exists":
            errs.append(invalid(op_path, operator, "operator must be Exists when `key` is empty, "
                                                   'which means "match all values and all keys"'))
        if seconds is not None and effect != "NoExecute":
            errs.append(invalid(child(tol_path, "effect"), effect,
                                "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("Equal", ""):
            msgs = naming.is_label_value(value)
            if msgs:
                errs.append(invalid(op_path, value, ";".join(msgs)))
        elif operator == "Exists":
            if value:
                errs.append(invalid(op_path, value,
                                    "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(op_path, operator, TOLERATION_OPERATORS))
        if effect and effect not in TAINT_EFFECTS:
            errs.append(not_supported(child(tol_path, "effect"), effect, TAINT_EFFECTS))


def validate_taints(node_spec: dict[str, Any], path: str, errs: Errs) -> None:
    """Node taints: unique by (key, effect). Upstream reports them at `metadata.taints`."""
    seen: set[tuple[str, str]] = set()
    for i, taint, spec_path in iter_dicts(node_spec, "taints", "spec", errs):
        idx_path = index(path, i)
        taint_key = get_str(taint, "key", spec_path, errs)
        value = get_str(taint, "value", spec_path, errs)
        effect = get_str(taint, "effect", spec_path, errs)
        validate_qualified_name(taint_key, child(idx_path, "key"), errs)
        msgs = naming.is_label_value(value)
        if msgs:
            errs.append(invalid(child(idx_path, "value"), value, ";".join(msgs)))
        if not effect:
            errs.append(required(child(idx_path, "effect")))
        elif effect not in TAINT_EFFECTS:
            errs.append(not_supported(child(idx_path, "effect"), effect, TAINT_EFFECTS))
        if (taint_key, effect) in seen:
            err = duplicate(idx_path, taint)
            errs.append(FieldError(err.type, err.field,
                                   "taints must be unique by key and effect pair", taint))
            continue
        seen.add((taint_key, effect))


# ---------------------------------------------------------------------------------------------
# Affinity


def validate_affinity(spec: dict[str, Any], path: str, errs: Errs) -> None:
    affinity = get_dict(spec, "affinity", path, errs)
    if affinity is None:
        return
    aff_path = child(path, "affinity")
    node = get_dict(affinity, "nodeAffinity", aff_path, errs)
    if node is not None:
        _node_affinity(node, child(aff_path, "nodeAffinity"), errs)
    for name in ("podAffinity", "podAntiAffinity"):
        pod = get_dict(affinity, name, aff_path, errs)
        if pod is None:
            continue
        pod_path = child(aff_path, name)
        for _, term, term_path in iter_dicts(pod, "requiredDuringSchedulingIgnoredDuringExecution",
                                             pod_path, errs):
            _pod_affinity_term(term, term_path, errs)
        for _, weighted, w_path in iter_dicts(
                pod, "preferredDuringSchedulingIgnoredDuringExecution", pod_path, errs):
            _weight(weighted, w_path, errs)
            term = get_dict(weighted, "podAffinityTerm", w_path, errs) or {}
            _pod_affinity_term(term, child(w_path, "podAffinityTerm"), errs)


def _weight(obj: dict[str, Any], path: str, errs: Errs) -> None:
    weight = get_int(obj, "weight", path, errs) or 0
    if not 1 <= weight <= 100:
        errs.append(invalid(child(path, "weight"), weight, "must be in the range 1-100"))


def _node_affinity(node: dict[str, Any], path: str, errs: Errs) -> None:
    required_terms = get_dict(node, "requiredDuringSchedulingIgnoredDuringExecution", path, errs)
    if required_terms is not None:
        req_path = child(path, "requiredDuringSchedulingIgnoredDuringExecution")
        terms = list(iter_dicts(required_terms, "nodeSelectorTerms", req_path, errs))
        if not terms and not required_terms.get("nodeSelectorTerms"):
            errs.append(required(child(req_path, "nodeSelectorTerms"),
                                 "must have at least one node selector term"))
        for _, term, term_path in terms:
            validate_node_selector_term(term, term_path, errs, check_values=True)
    for _, pref, pref_path in iter_dicts(node, "preferredDuringSchedulingIgnoredDuringExecution",
                                         path, errs):
        _weight(pref, pref_path, errs)
        term = get_dict(pref, "preference", pref_path, errs) or {}
        validate_node_selector_term(term, child(pref_path, "preference"), errs, check_values=False)


def validate_node_selector_term(term: dict[str, Any], path: str, errs: Errs, *,
                                check_values: bool) -> None:
    for _, req, req_path in iter_dicts(term, "matchExpressions", path, errs):
        operator = get_str(req, "operator", req_path, errs)
        values = get_str_list(req, "values", req_path, errs)
        values_path = child(req_path, "values")
        if operator in ("In", "NotIn"):
            if not values:
                errs.append(required(values_path,
                                     "must be specified when `operator` is 'In' or 'NotIn'"))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errs.append(forbidden(values_path, "may not be specified when `operator` is "
                                                   "'Exists' or 'DoesNotExist'"))
        elif operator in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(required(values_path, "must be specified single value when "
                                                  "`operator` is 'Lt' or 'Gt'"))
        else:
            errs.append(invalid(child(req_path, "operator"), operator,
                                "not a valid selector operator"))
        validate_qualified_name(get_str(req, "key", req_path, errs), child(req_path, "key"), errs)
        if check_values:
            for i, value in enumerate(values):
                for msg in naming.is_label_value(value):
                    errs.append(invalid(index(values_path, i), value, msg))
    for _, req, req_path in iter_dicts(term, "matchFields", path, errs):
        operator = get_str(req, "operator", req_path, errs)
        values = get_str_list(req, "values", req_path, errs)
        if operator in ("In", "NotIn"):
            if len(values) != 1:
                errs.append(required(child(req_path, "values"),
                                     "must be only one value when `operator` is 'In' or "
                                     "'NotIn' for node field selector"))
        else:
            errs.append(invalid(child(req_path, "operator"), operator,
                                "not a valid selector operator"))
        field_key = get_str(req, "key", req_path, errs)
        if field_key != "metadata.name":
            errs.append(invalid(child(req_path, "key"), field_key,
                                "not a valid field selector key"))
        else:
            for i, value in enumerate(values):
                for msg in name_is_dns_subdomain(value, False):
                    errs.append(invalid(index(child(req_path, "values"), i), value, msg))


def _pod_affinity_term(term: dict[str, Any], path: str, errs: Errs) -> None:
    for name in ("labelSelector", "namespaceSelector"):
        selector = get_dict(term, name, path, errs)
        if selector is not None:
            validate_label_selector(selector, child(path, name), errs)
    for namespace in get_str_list(term, "namespaces", path, errs):
        for msg in name_is_dns_label(namespace, False):
            errs.append(invalid(child(path, "namespace"), namespace, msg))
    topology_key = get_str(term, "topologyKey", path, errs)
    if not topology_key:
        errs.append(required(child(path, "topologyKey"), "can not be empty"))
    validate_qualified_name(topology_key, child(path, "topologyKey"), errs)


# ---------------------------------------------------------------------------------------------
# Topology spread constraints


def validate_topology_spread(spec: dict[str, Any], path: str, errs: Errs) -> None:
    seen: set[tuple[str, str]] = set()
    for _, constraint, c_path in iter_dicts(spec, "topologySpreadConstraints", path, errs):
        max_skew = get_int(constraint, "maxSkew", c_path, errs) or 0
        if max_skew <= 0:
            errs.append(invalid(child(c_path, "maxSkew"), max_skew, "must be greater than zero"))
        topology_key = get_str(constraint, "topologyKey", c_path, errs)
        if not topology_key:
            errs.append(required(child(c_path, "topologyKey"), "can not be empty"))
        action = get_str(constraint, "whenUnsatisfiable", c_path, errs)
        if action not in WHEN_UNSATISFIABLE:
            errs.append(not_supported(child(c_path, "whenUnsatisfiable"), action,
                                      WHEN_UNSATISFIABLE))
        if (topology_key, action) in seen:
            errs.append(duplicate(child(c_path, "{topologyKey, whenUnsatisfiable}"),
                                  f"{{{topology_key}, {action}}}"))
        seen.add((topology_key, action))
        min_domains = get_int(constraint, "minDomains", c_path, errs)
        if min_domains is not None:
            if min_domains <= 0:
                errs.append(invalid(child(c_path, "minDomains"), min_domains,
                                    "must be greater than zero"))
            if action != "DoNotSchedule":
                errs.append(invalid(child(c_path, "minDomains"), min_domains,
                                    "can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                                    f"not {action}"))
        for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = constraint.get(name)
            if policy is not None and policy not in NODE_INCLUSION_POLICIES:
                errs.append(not_supported(child(c_path, name), policy, NODE_INCLUSION_POLICIES))
        selector = get_dict(constraint, "labelSelector", c_path, errs)
        if selector is not None:
            validate_label_selector(selector, child(c_path, "labelSelector"), errs)
