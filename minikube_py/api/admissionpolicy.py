"""ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding: defaults and validation.

Kubernetes pieces: pkg/apis/admissionregistration/v1/defaults.go
(SetDefaults_ValidatingAdmissionPolicySpec, SetDefaults_MatchResources, SetDefaults_Rule) and
pkg/apis/admissionregistration/validation/validation.go (ValidateValidatingAdmissionPolicy,
ValidateValidatingAdmissionPolicyBinding and the rule/matchResources helpers they share with
the webhook configurations). Pure functions of decoded JSON that never raise: the registry
(registry/admissionpolicies.py) calls them before every write and turns errors into a 422.

CEL expressions are checked for presence and shape here; whether they compile is checked by
the registry with the CEL environment (an expression that does not compile is a 422 at write
time, as upstream's compile-on-validate).
"""

from __future__ import annotations

import re
from typing import Any

from minikube_py.api.errors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from minikube_py.api.validation.common import (
    validate_label_selector,
    validate_qualified_name,
)
from minikube_py.api.validation.typed import Errs, child, index, type_error

Obj = dict[str, Any]

FAILURE_POLICIES = ("Fail", "Ignore")
MATCH_POLICIES = ("Equivalent", "Exact")
SCOPES = ("*", "Cluster", "Namespaced")
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
REASONS = ("Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized")
VALIDATION_ACTIONS = ("Audit", "Deny", "Warn")
PARAM_NOT_FOUND_ACTIONS = ("Allow", "Deny")
#: upstream's limit on matchConditions per policy or webhook
MAX_MATCH_CONDITIONS = 64
_CEL_IDENTIFIER = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")


# -- defaults --------------------------------------------------------------------------------
def default_match_resources(match: Any) -> None:
    """SetDefaults_MatchResources plus SetDefaults_Rule on every (excluded) rule."""
    if not isinstance(match, dict):
        return
    match.setdefault("matchPolicy", "Equivalent")
    if match.get("namespaceSelector") is None:
        match["namespaceSelector"] = {}
    if match.get("objectSelector") is None:
        match["objectSelector"] = {}
    for field in ("resourceRules", "excludeResourceRules"):
        for rule in match.get(field) or ():
            if isinstance(rule, dict) and rule.get("scope") is None:
                rule["scope"] = "*"


def default_policy(policy: Obj) -> None:
    """SetDefaults_ValidatingAdmissionPolicySpec: failurePolicy Fail; matchConstraints
    defaulted as every MatchResources is."""
    spec = policy.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("failurePolicy") is None:
        spec["failurePolicy"] = "Fail"
    default_match_resources(spec.get("matchConstraints"))


def default_binding(binding: Obj) -> None:
    """The binding's matchResources, when given, are defaulted like a policy's."""
    spec = binding.get("spec")
    if isinstance(spec, dict):
        default_match_resources(spec.get("matchResources"))


# -- shared pieces -----------------------------------------------------------------------------
def _strings(value: Any, path: str, errs: Errs) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        errs.append(type_error(path, value, "a list of strings"))
        return []
    return value


_STAR_TEXT = {"operations": "operations", "apiGroups": "API groups", "apiVersions": "API versions"}


def _no_mixed_star(values: list[str], path: str, errs: Errs) -> None:
    """`*` present means it is the only item (upstream's hasWildcard checks)."""
    if "*" in values and len(values) > 1:
        what = _STAR_TEXT[path.rsplit(".", 1)[-1]]
        errs.append(invalid(path, values, f"if '*' is present, must not specify other {what}"))


def _validate_resources(resources: list[str], path: str, errs: Errs) -> None:
    """upstream validateResources: no empty item; `*/*` alone; `*` not beside a resource
    without subresources; no `x/y` beside `x/*`, no `y/x` beside `*/x`."""
    if not resources:
        errs.append(required(path, ""))
    with_any_sub: set[str] = set()  # x of `x/*`
    any_with_sub: set[str] = set()  # x of `*/x`
    double = single = plain = False
    for i, res in enumerate(resources):
        if res == "":
            errs.append(required(index(path, i), ""))
            continue
        double = double or res == "*/*"
        single = single or res == "*"
        base, slash, sub = res.partition("/")
        if not slash:
            plain = plain or res != "*"
            continue
        if base in with_any_sub:
            errs.append(invalid(index(path, i), res,
                                f"if '{base}/*' is present, must not specify {res}"))
        if sub in any_with_sub:
            errs.append(invalid(index(path, i), res,
                                f"if '*/{sub}' is present, must not specify {res}"))
        if sub == "*":
            with_any_sub.add(base)
        if base == "*":
            any_with_sub.add(sub)
    if len(resources) > 1 and double:
        errs.append(invalid(path, resources,
                            "if '*/*' is present, must not specify other resources"))
    if single and plain:
        errs.append(invalid(path, resources, "if '*' is present, must not specify other "
                                             "resources without subresources"))


def validate_rule(rule: Any, path: str, errs: Errs, *, allow_names: bool = True) -> None:
    """A NamedRuleWithOperations: operations, apiGroups, apiVersions, resources, scope."""
    if not isinstance(rule, dict):
        errs.append(type_error(path, rule, "an object"))
        return
    ops = _strings(rule.get("operations"), child(path, "operations"), errs)
    if not ops:
        errs.append(required(child(path, "operations"), ""))
    for i, op in enumerate(ops):
        if op not in OPERATIONS:
            errs.append(not_supported(index(child(path, "operations"), i), op, OPERATIONS))
    _no_mixed_star(ops, child(path, "operations"), errs)
    for field in ("apiGroups", "apiVersions"):
        values = _strings(rule.get(field), child(path, field), errs)
        if not values:
            errs.append(required(child(path, field), ""))
        if field == "apiVersions":
            for i, v in enumerate(values):
                if v == "":
                    errs.append(required(index(child(path, field), i), ""))
        _no_mixed_star(values, child(path, field), errs)
    _validate_resources(_strings(rule.get("resources"), child(path, "resources"), errs),
                        child(path, "resources"), errs)
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        errs.append(not_supported(child(path, "scope"), scope, SCOPES))
    names = rule.get("resourceNames")
    if names is not None:
        _strings(names, child(path, "resourceNames"), errs)
        if not allow_names:
            errs.append(forbidden(child(path, "resourceNames"), "not allowed here"))


def validate_match_resources(match: Any, path: str, errs: Errs, *,
                             rules_required: bool) -> None:
    """upstream validateMatchResources: selectors, matchPolicy, (excluded) resource rules."""
    if not isinstance(match, dict):
        errs.append(type_error(path, match, "an object"))
        return
    policy = match.get("matchPolicy")
    if policy is None:
        errs.append(required(child(path, "matchPolicy"), ""))
    elif policy not in MATCH_POLICIES:
        errs.append(not_supported(child(path, "matchPolicy"), policy, MATCH_POLICIES))
    for field in ("namespaceSelector", "objectSelector"):
        selector = match.get(field)
        if selector is None:
            errs.append(required(child(path, field), ""))
        elif not isinstance(selector, dict):
            errs.append(type_error(child(path, field), selector, "an object"))
        else:
            validate_label_selector(selector, child(path, field), errs)
    rules = match.get("resourceRules")
    if rules_required and not rules:
        errs.append(required(child(path, "resourceRules"), ""))
    for field in ("resourceRules", "excludeResourceRules"):
        value = match.get(field)
        if value is None:
            continue
        if not isinstance(value, list):
            errs.append(type_error(child(path, field), value, "a list"))
            continue
        for i, rule in enumerate(value):
            validate_rule(rule, index(child(path, field), i), errs)


def _expression(item: dict, field: str, path: str, errs: Errs) -> str:
    value = item.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        errs.append(required(child(path, field), ""))
        return ""
    if not isinstance(value, str):
        errs.append(type_error(child(path, field), value, "a string"))
        return ""
    return value


def _items(spec: dict, field: str, path: str, errs: Errs) -> list[tuple[int, dict, str]]:
    value = spec.get(field)
    if value is None:
        return []
    if not isinstance(value, list):
        errs.append(type_error(child(path, field), value, "a list"))
        return []
    out = []
    for i, item in enumerate(value):
        item_path = index(child(path, field), i)
        if isinstance(item, dict):
            out.append((i, item, item_path))
        else:
            errs.append(type_error(item_path, item, "an object"))
    return out


def validate_match_conditions(spec: dict, path: str, errs: Errs) -> None:
    """upstream validateMatchConditions: at most 64, names qualified and unique."""
    items = _items(spec, "matchConditions", path, errs)
    if len(items) > MAX_MATCH_CONDITIONS:
        errs.append(FieldError("FieldValueTooMany", child(path, "matchConditions"),
                               f"must have at most {MAX_MATCH_CONDITIONS} items"))
    seen: set[str] = set()
    for _, cond, cond_path in items:
        name = cond.get("name")
        if not name:
            errs.append(required(child(cond_path, "name"), ""))
        elif not isinstance(name, str):
            errs.append(type_error(child(cond_path, "name"), name, "a string"))
        else:
            validate_qualified_name(name, child(cond_path, "name"), errs)
            if name in seen:
                errs.append(duplicate(child(cond_path, "name"), name))
            seen.add(name)
        _expression(cond, "expression", cond_path, errs)


# -- the policy --------------------------------------------------------------------------------
def validate_policy_spec(spec: Any, name: str = "") -> list[FieldError]:
    """ValidateValidatingAdmissionPolicySpec, minus CEL compilation."""
    errs: Errs = []
    path = "spec"
    if not isinstance(spec, dict):
        return [required(path, "")]
    param_kind = spec.get("paramKind")
    if param_kind is not None:
        pk_path = child(path, "paramKind")
        if not isinstance(param_kind, dict):
            errs.append(type_error(pk_path, param_kind, "an object"))
        else:
            for field in ("apiVersion", "kind"):
                if not param_kind.get(field):
                    errs.append(required(child(pk_path, field), ""))
            version = param_kind.get("apiVersion")
            if isinstance(version, str) and version.count("/") > 1:
                errs.append(invalid(child(pk_path, "apiVersion"), version,
                                    "must be a valid group/version"))
    match = spec.get("matchConstraints")
    if match is None:
        errs.append(required(child(path, "matchConstraints"), ""))
    else:
        validate_match_resources(match, child(path, "matchConstraints"), errs,
                                 rules_required=True)
    if not spec.get("validations") and not spec.get("auditAnnotations"):
        errs.append(required(child(path, "validations"),
                             "validations or auditAnnotations must contain at least one item"))
    failure = spec.get("failurePolicy")
    if failure is None:
        errs.append(required(child(path, "failurePolicy"), ""))
    elif failure not in FAILURE_POLICIES:
        errs.append(not_supported(child(path, "failurePolicy"), failure, FAILURE_POLICIES))
    validate_match_conditions(spec, path, errs)
    for _, var, var_path in _items(spec, "variables", path, errs):
        var_name = var.get("name")
        if not var_name:
            errs.append(required(child(var_path, "name"), ""))
        elif not isinstance(var_name, str) or not _CEL_IDENTIFIER.match(var_name):
            errs.append(invalid(child(var_path, "name"), var_name,
                                "name is not a valid CEL identifier"))
        _expression(var, "expression", var_path, errs)
    for _, val, val_path in _items(spec, "validations", path, errs):
        _expression(val, "expression", val_path, errs)
        message = val.get("message")
        if isinstance(message, str) and "\n" in message:
            errs.append(invalid(child(val_path, "message"), message,
                                "message must not contain line breaks"))
        reason = val.get("reason")
        if reason is not None and reason not in REASONS:
            errs.append(not_supported(child(val_path, "reason"), reason, REASONS))
    keys: set[str] = set()
    for _, ann, ann_path in _items(spec, "auditAnnotations", path, errs):
        key = ann.get("key")
        if not key:
            errs.append(required(child(ann_path, "key"), ""))
        elif not isinstance(key, str):
            errs.append(type_error(child(ann_path, "key"), key, "a string"))
        else:
            validate_qualified_name(f"{name}/{key}", child(ann_path, "key"), errs)
            if key in keys:
                errs.append(duplicate(child(ann_path, "key"), key))
            keys.add(key)
        _expression(ann, "valueExpression", ann_path, errs)
    return errs


# -- the binding -------------------------------------------------------------------------------
def validate_binding_spec(spec: Any) -> list[FieldError]:
    """ValidateValidatingAdmissionPolicyBindingSpec."""
    errs: Errs = []
    path = "spec"
    if not isinstance(spec, dict):
        return [required(path, "")]
    if not spec.get("policyName"):
        errs.append(required(child(path, "policyName"), ""))
    ref = spec.get("paramRef")
    if ref is not None:
        _validate_param_ref(ref, child(path, "paramRef"), errs)
    match = spec.get("matchResources")
    if match is not None:
        validate_match_resources(match, child(path, "matchResources"), errs,
                                 rules_required=False)
    actions = _strings(spec.get("validationActions"), child(path, "validationActions"), errs)
    actions_path = child(path, "validationActions")
    if not actions:
        errs.append(required(actions_path, ""))
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            errs.append(not_supported(index(actions_path, i), action, VALIDATION_ACTIONS))
        if action in seen:
            errs.append(duplicate(index(actions_path, i), action))
        seen.add(action)
    if "Deny" in seen and "Warn" in seen:
        errs.append(invalid(actions_path, actions,
                            "must not contain both Deny and Warn (repeating the same validation "
                            "failure information in the API response and headers serves no "
                            "purpose)"))
    return errs


def _validate_param_ref(ref: Any, path: str, errs: Errs) -> None:
    if not isinstance(ref, dict):
        errs.append(type_error(path, ref, "an object"))
        return
    name, selector = ref.get("name"), ref.get("selector")
    if name and selector is not None:
        errs.append(forbidden(child(path, "name"), "name and selector are mutually exclusive"))
    elif not name and selector is None:
        errs.append(required(path, "one of name or selector must be specified"))
    if isinstance(selector, dict):
        validate_label_selector(selector, child(path, "selector"), errs)
    action = ref.get("parameterNotFoundAction")
    if action is None:
        errs.append(required(child(path, "parameterNotFoundAction"), ""))
    elif action not in PARAM_NOT_FOUND_ACTIONS:
        errs.append(not_supported(child(path, "parameterNotFoundAction"), action,
                                  PARAM_NOT_FOUND_ACTIONS))
