"""flowcontrol.apiserver.k8s.io/v1 FlowSchema and PriorityLevelConfiguration.

Kubernetes piece: pkg/apis/flowcontrol/validation (ValidateFlowSchema, ValidateFlowSchemaUpdate,
ValidatePriorityLevelConfiguration, ...) as the v1 strategies call them in 1.31. The objects are
API Priority and Fairness configuration; we store and validate them with upstream's rules (a
matching precedence in 1..10000, subjects and rules that can match something, queuing whose
shuffle-sharding parameters fit 60 bits of entropy, `exempt` being the one Exempt level) while
admission control of requests stays our --max-requests-inflight limits (docs say so).
"""

from __future__ import annotations

import math
from typing import Any

from minikube_py.api.errors import (
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from minikube_py.api.validation.common import (
    name_is_dns_subdomain,
    validate_name,
)
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_bool,
    get_dict,
    get_int,
    get_list,
    get_str,
    get_str_list,
    iter_dicts,
)

DISTINGUISHER_METHODS = ("ByNamespace", "ByUser")
SUBJECT_KINDS = ("Group", "ServiceAccount", "User")
PRIORITY_LEVEL_TYPES = ("Exempt", "Limited")
LIMIT_RESPONSE_TYPES = ("Queue", "Reject")
EXEMPT = "exempt"
MAX_MATCHING_PRECEDENCE = 10000
MAX_HASH_BITS = 60


# ---------------------------------------------------------------------------------------------
# FlowSchema


def _subject(subject: dict[str, Any], path: str, errs: Errs) -> None:
    kind = subject.get("kind")
    fields = {"User": ("user", ("name",)), "Group": ("group", ("name",)),
              "ServiceAccount": ("serviceAccount", ("namespace", "name"))}
    if kind not in fields:
        errs.append(not_supported(child(path, "kind"), kind, SUBJECT_KINDS))
        return
    field, names = fields[kind]
    body = get_dict(subject, field, path, errs)
    if body is None:
        errs.append(required(child(path, field), f"{field} is required when subject kind is "
                                                 f"'{kind}'"))
        return
    for name in names:
        if not get_str(body, name, child(path, field), errs):
            errs.append(required(child(child(path, field), name),
                                 f"{name} is required" if name == "namespace" else ""))
    for other, _ in fields.values():
        if other != field and subject.get(other) is not None:
            errs.append(forbidden(child(path, other), f"{other} is forbidden when subject kind "
                                                      f"is '{kind}'"))


def _star_list(rule: dict[str, Any], field: str, path: str, errs: Errs, *, empty: str,
               others: str) -> list[str]:
    """A rule's list that must not be empty (`empty`: the message) and in which `*` stands
    alone (upstream's hasWildcard checks of each rule list)."""
    values = get_str_list(rule, field, path, errs)
    if not values:
        errs.append(required(child(path, field), empty))
    elif "*" in values and len(values) > 1:
        errs.append(invalid(child(path, field), values,
                            f"if '*' is present, must not specify other {others}"))
    return values


def _verbs(rule: dict[str, Any], path: str, errs: Errs) -> None:
    _star_list(rule, "verbs", path, errs, empty="verbs must contain at least one value",
               others="verbs")


def _resource_rule(rule: dict[str, Any], path: str, errs: Errs) -> None:
    _verbs(rule, path, errs)
    _star_list(rule, "apiGroups", path, errs,
               empty="resource rules must supply at least one api group", others="api groups")
    _star_list(rule, "resources", path, errs,
               empty="resource rules must supply at least one resource", others="resources")
    namespaces = get_str_list(rule, "namespaces", path, errs)
    if not namespaces and not get_bool(rule, "clusterScope", path, errs):
        errs.append(required(child(path, "namespaces"), "resource rules that are not cluster "
                             "scoped must supply at least one namespace"))
    elif "*" in namespaces and len(namespaces) > 1:
        errs.append(invalid(child(path, "namespaces"), namespaces,
                            "if '*' is present, must not specify other namespaces"))


def _non_resource_rule(rule: dict[str, Any], path: str, errs: Errs) -> None:
    _verbs(rule, path, errs)
    _star_list(rule, "nonResourceURLs", path, errs,
               empty="nonResourceURLs must contain at least one value",
               others="non-resource URLs")


def _flow_schema_spec(fs: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(fs, "spec", "", errs) or {}
    precedence = get_int(spec, "matchingPrecedence", "spec", errs)
    if precedence is not None:
        if precedence <= 0:
            errs.append(invalid("spec.matchingPrecedence", precedence,
                                "must be a positive value"))
        elif precedence > MAX_MATCHING_PRECEDENCE:
            errs.append(invalid("spec.matchingPrecedence", precedence,
                                f"must not be greater than {MAX_MATCHING_PRECEDENCE}"))
    method = get_dict(spec, "distinguisherMethod", "spec", errs)
    if method is not None and method.get("type") not in DISTINGUISHER_METHODS:
        errs.append(not_supported("spec.distinguisherMethod.type", method.get("type"),
                                  DISTINGUISHER_METHODS))
    level = get_dict(spec, "priorityLevelConfiguration", "spec", errs) or {}
    name = get_str(level, "name", "spec.priorityLevelConfiguration", errs)
    if not name:
        errs.append(required("spec.priorityLevelConfiguration.name",
                             "must reference a priority level"))
    else:
        validate_name(name, "spec.priorityLevelConfiguration.name", errs)
    for _, rules, path in iter_dicts(spec, "rules", "spec", errs):
        if not get_list(rules, "subjects", path, errs):
            errs.append(required(child(path, "subjects"),
                                 "subjects must contain at least one value"))
        for _, subject, subject_path in iter_dicts(rules, "subjects", path, errs):
            _subject(subject, subject_path, errs)
        resource_rules = get_list(rules, "resourceRules", path, errs)
        non_resource_rules = get_list(rules, "nonResourceRules", path, errs)
        if not resource_rules and not non_resource_rules:
            errs.append(required(path, "at least one of resourceRules and nonResourceRules has "
                                       "to be non-empty"))
        for _, rule, rule_path in iter_dicts(rules, "resourceRules", path, errs):
            _resource_rule(rule, rule_path, errs)
        for _, rule, rule_path in iter_dicts(rules, "nonResourceRules", path, errs):
            _non_resource_rule(rule, rule_path, errs)


def validate_flow_schema(fs: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(fs, False, name_is_dns_subdomain, errs)
    _flow_schema_spec(fs, errs)


def validate_flow_schema_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _flow_schema_spec(new, errs)


# ---------------------------------------------------------------------------------------------
# PriorityLevelConfiguration


def required_entropy_bits(deck_size: int, hand_size: int) -> int:
    """shufflesharding.RequiredEntropyBits: ceil(log2(deck^hand))."""
    return math.ceil(math.log2(deck_size) * hand_size)


def _queuing(queuing: dict[str, Any], path: str, errs: Errs) -> None:
    limit = get_int(queuing, "queueLengthLimit", path, errs) or 0
    if limit <= 0:
        errs.append(invalid(child(path, "queueLengthLimit"), limit, "must be positive"))
    queues = get_int(queuing, "queues", path, errs) or 0
    if queues <= 0:
        errs.append(invalid(child(path, "queues"), queues, "must be positive"))
    hand = get_int(queuing, "handSize", path, errs) or 0
    if hand <= 0:
        errs.append(invalid(child(path, "handSize"), hand, "must be positive"))
    elif queues > 0:
        if hand > queues:
            errs.append(invalid(child(path, "handSize"), hand,
                                f"should not be greater than queues ({queues})"))
        elif required_entropy_bits(queues, hand) > MAX_HASH_BITS:
            errs.append(invalid(child(path, "handSize"), hand,
                                f"required entropy bits of deckSize {queues} and handSize {hand} "
                                f"should not be greater than {MAX_HASH_BITS}"))


def _lendable(obj: dict[str, Any], path: str, errs: Errs) -> None:
    lendable = get_int(obj, "lendablePercent", path, errs)
    if lendable is not None and not 0 <= lendable <= 100:
        errs.append(invalid(child(path, "lendablePercent"), lendable,
                            "must be between 0 and 100, inclusive"))


def _limited(limited: dict[str, Any], errs: Errs) -> None:
    path = "spec.limited"
    shares = get_int(limited, "nominalConcurrencyShares", path, errs)
    if shares is not None and shares < 0:
        errs.append(invalid(child(path, "nominalConcurrencyShares"), shares,
                            "must be a non-negative integer"))
    _lendable(limited, path, errs)
    borrowing = get_int(limited, "borrowingLimitPercent", path, errs)
    if borrowing is not None and borrowing < 0:
        errs.append(invalid(child(path, "borrowingLimitPercent"), borrowing,
                            "if specified, must be a non-negative integer"))
    response = get_dict(limited, "limitResponse", path, errs) or {}
    response_path = child(path, "limitResponse")
    kind = response.get("type")
    queuing = get_dict(response, "queuing", response_path, errs)
    if kind == "Queue":
        if queuing is None:
            errs.append(required(child(response_path, "queuing"),
                                 "must not be empty if the type is Queue"))
        else:
            _queuing(queuing, child(response_path, "queuing"), errs)
    elif kind == "Reject":
        if queuing is not None:
            errs.append(forbidden(child(response_path, "queuing"),
                                  "must be nil if limited.limitResponse.type is not Limited"))
    else:
        errs.append(not_supported(child(response_path, "type"), kind, LIMIT_RESPONSE_TYPES))


def _priority_level_spec(plc: dict[str, Any], errs: Errs) -> None:
    name = (plc.get("metadata") or {}).get("name") if isinstance(plc.get("metadata"), dict) \
        else None
    spec = get_dict(plc, "spec", "", errs) or {}
    kind = spec.get("type")
    if (name == EXEMPT) != (kind == "Exempt") and kind in PRIORITY_LEVEL_TYPES:
        errs.append(invalid("spec.type", kind,
                            "type must be 'Exempt' if and only if name is 'exempt'"))
    limited = get_dict(spec, "limited", "spec", errs)
    exempt = get_dict(spec, "exempt", "spec", errs)
    if kind == "Exempt":
        if limited is not None:
            errs.append(forbidden("spec.limited", "must be nil if the type is not Limited"))
        if exempt is not None:
            shares = get_int(exempt, "nominalConcurrencyShares", "spec.exempt", errs)
            if shares is not None and shares < 0:
                errs.append(invalid("spec.exempt.nominalConcurrencyShares", shares,
                                    "must be a non-negative integer"))
            _lendable(exempt, "spec.exempt", errs)
    elif kind == "Limited":
        if exempt is not None:
            errs.append(forbidden("spec.exempt", "must be nil if the type is Limited"))
        if limited is None:
            errs.append(required("spec.limited", "must not be empty when type is Limited"))
        else:
            _limited(limited, errs)
    else:
        errs.append(not_supported("spec.type", kind, PRIORITY_LEVEL_TYPES))


def validate_priority_level(plc: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(plc, False, name_is_dns_subdomain, errs)
    _priority_level_spec(plc, errs)


def validate_priority_level_update(new: dict[str, Any], old: dict[str, Any],
                                   errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _priority_level_spec(new, errs)


def _status_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """Status writes: metadata rules, and conditions with a type (upstream
    ValidateFlowSchemaStatus / ValidatePriorityLevelConfigurationStatus)."""
    validate_object_meta_update(new, old, errs)
    status = get_dict(new, "status", "", errs) or {}
    seen: set[str] = set()
    for _, condition, path in iter_dicts(status, "conditions", "status", errs):
        kind = get_str(condition, "type", path, errs)
        if not kind:
            errs.append(required(child(path, "type"), "must not be empty"))
        elif kind in seen:
            errs.append(duplicate(child(path, "type"), kind))
        seen.add(kind)


CREATE = {"FlowSchema": validate_flow_schema, "PriorityLevelConfiguration": validate_priority_level}
UPDATE = {"FlowSchema": validate_flow_schema_update,
          "PriorityLevelConfiguration": validate_priority_level_update}
STATUS_UPDATE = {"FlowSchema": _status_update, "PriorityLevelConfiguration": _status_update}
