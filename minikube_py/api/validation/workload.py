"""Controllers: ReplicationControllers (core/v1), ReplicaSets and Deployments (apps/v1), Scale.

Kubernetes pieces: pkg/apis/core/validation (ValidateReplicationController,
ValidatePodTemplateSpecForRC, ValidateReplicationControllerStatus), pkg/apis/apps/validation
(ValidateReplicaSetSpec, ValidatePodTemplateSpecForReplicaSet, ValidateDeploymentSpec,
ValidateDeploymentStrategy, ValidateRollingUpdateDeployment, the status validators), the apps/v1
strategies' "selector is immutable" rule, and autoscaling ValidateScale. A controller's selector
must select its own template's labels, or it would create pods it never counts.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api import labels
from minikube_py.api.errors import forbidden, invalid, not_supported, required
from minikube_py.api.validation.common import (
    NEGATIVE,
    is_valid_percent,
    name_is_dns_subdomain,
    sub,
    validate_immutable,
    validate_label_selector,
    validate_nonnegative,
)
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.pod import validate_pod_template_spec
from minikube_py.api.validation.typed import (
    Errs,
    get_dict,
    get_int,
    get_str_map,
    is_int,
)

SELECTOR_MISMATCH = "`selector` does not match template `labels`"
GREATER_THAN_REPLICAS = "cannot be greater than status.replicas"


def _template_labels(template: dict[str, Any]) -> Any:
    return sub(template, "metadata", "labels")


def _template_rules(template: dict[str, Any], owner: str, errs: Errs) -> None:
    """Pods of a controller restart forever and have no deadline."""
    validate_pod_template_spec(template, "spec.template", errs)
    spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    restart = spec.get("restartPolicy")
    if restart != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy",
                                  "" if restart is None else restart, ["Always"]))
    if spec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                              f"activeDeadlineSeconds in {owner} is not Supported"))


# ---------------------------------------------------------------------------------------------
# ReplicationController


def validate_replication_controller(rc: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(rc, True, name_is_dns_subdomain, errs)
    _rc_spec(rc, errs)


def _rc_spec(rc: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(rc, "spec", "", errs) or {}
    validate_nonnegative(get_int(spec, "minReadySeconds", "spec", errs), "spec.minReadySeconds",
                         errs)
    selector = get_str_map(spec, "selector", "spec", errs)
    if not selector:
        errs.append(required("spec.selector"))
    validate_nonnegative(get_int(spec, "replicas", "spec", errs), "spec.replicas", errs)
    template = get_dict(spec, "template", "spec", errs)
    if template is None:
        if spec.get("template") is None:
            errs.append(required("spec.template"))
        return
    template_labels = _template_labels(template)
    if selector and not labels.selector_from_set(selector).matches(
            template_labels if isinstance(template_labels, dict) else {}):
        errs.append(invalid("spec.template.metadata.labels", template_labels, SELECTOR_MISMATCH))
    _template_rules(template, "ReplicationController", errs)


def validate_replication_controller_update(new: dict[str, Any], old: dict[str, Any],
                                           errs: Errs) -> None:
    validate_object_meta(new, True, name_is_dns_subdomain, errs)
    validate_object_meta_update(new, old, errs)
    _rc_spec(new, errs)


def validate_replica_counts_status(obj: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """ReplicationController and ReplicaSet status."""
    validate_object_meta_update(obj, old, errs)
    status = get_dict(obj, "status", "", errs) or {}
    counts = status_counts(status, ("replicas", "fullyLabeledReplicas", "readyReplicas",
                              "availableReplicas", "observedGeneration"), errs)
    for name in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        if counts[name] > counts["replicas"]:
            errs.append(invalid(f"status.{name}", counts[name], GREATER_THAN_REPLICAS))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        errs.append(invalid("status.availableReplicas", counts["availableReplicas"],
                            "cannot be greater than readyReplicas"))


def status_counts(status: dict[str, Any], names: tuple[str, ...], errs: Errs) -> dict[str, int]:
    counts = {}
    for name in names:
        value = get_int(status, name, "status", errs)
        validate_nonnegative(value, f"status.{name}", errs)
        counts[name] = value or 0
    return counts


# ---------------------------------------------------------------------------------------------
# apps/v1 ReplicaSet and Deployment


def apps_selector_and_template(spec: dict[str, Any], owner: str, errs: Errs,
                               word: str = "deployment") -> None:
    """Selector present, valid, non-empty and matching the template; then the template.
    `word` names the kind in the empty-selector message (upstream says "deployment" for
    ReplicaSets too)."""
    selector = get_dict(spec, "selector", "spec", errs)
    if spec.get("selector") is None:
        errs.append(required("spec.selector"))
    elif selector is not None:
        validate_label_selector(selector, "spec.selector", errs)
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            errs.append(invalid("spec.selector", selector,
                                f"empty selector is invalid for {word}"))
    try:
        compiled = labels.selector_from_label_selector(selector)
    except Exception:  # noqa: BLE001 - any malformed selector; the details were reported above
        errs.append(invalid("spec.selector", selector, "invalid label selector"))
        return
    template = get_dict(spec, "template", "spec", errs) or {}
    template_labels = _template_labels(template)
    if spec.get("selector") is None or selector is not None:
        if not compiled.empty() and not compiled.matches(
                template_labels if isinstance(template_labels, dict) else {}):
            errs.append(invalid("spec.template.metadata.labels", template_labels,
                                SELECTOR_MISMATCH))
    _template_rules(template, owner if word != "deployment" else "ReplicaSet", errs)


def validate_replica_set(rs: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(rs, True, name_is_dns_subdomain, errs)
    _replica_set_spec(rs, errs)


def _replica_set_spec(rs: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(rs, "spec", "", errs) or {}
    validate_nonnegative(get_int(spec, "replicas", "spec", errs), "spec.replicas", errs)
    validate_nonnegative(get_int(spec, "minReadySeconds", "spec", errs), "spec.minReadySeconds",
                         errs)
    apps_selector_and_template(spec, "ReplicaSet", errs)


def _selector_immutable(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_immutable(sub(new, "spec", "selector"), sub(old, "spec", "selector"),
                       "spec.selector", errs)


def validate_replica_set_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _replica_set_spec(new, errs)
    _selector_immutable(new, old, errs)


def validate_deployment(deployment: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(deployment, True, name_is_dns_subdomain, errs)
    _deployment_spec(deployment, errs)


def _deployment_spec(deployment: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(deployment, "spec", "", errs) or {}
    validate_nonnegative(get_int(spec, "replicas", "spec", errs), "spec.replicas", errs)
    apps_selector_and_template(spec, "Deployment", errs)
    _strategy(spec, errs)
    min_ready = get_int(spec, "minReadySeconds", "spec", errs) or 0
    validate_nonnegative(min_ready, "spec.minReadySeconds", errs)
    validate_nonnegative(get_int(spec, "revisionHistoryLimit", "spec", errs),
                         "spec.revisionHistoryLimit", errs)
    rollback = get_dict(spec, "rollbackTo", "spec", errs)
    if rollback is not None:
        validate_nonnegative(get_int(rollback, "revision", "spec.rollbackTo", errs),
                             "spec.rollback.version", errs)
    deadline = get_int(spec, "progressDeadlineSeconds", "spec", errs)
    if deadline is not None:
        validate_nonnegative(deadline, "spec.progressDeadlineSeconds", errs)
        if deadline <= min_ready:
            errs.append(invalid("spec.progressDeadlineSeconds", deadline,
                                "must be greater than minReadySeconds"))


def _strategy(spec: dict[str, Any], errs: Errs) -> None:
    strategy = get_dict(spec, "strategy", "spec", errs) or {}
    kind = strategy.get("type")
    rolling = get_dict(strategy, "rollingUpdate", "spec.strategy", errs)
    if kind == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            errs.append(forbidden("spec.strategy.rollingUpdate",
                                  "may not be specified when strategy `type` is 'Recreate'"))
    elif kind == "RollingUpdate":
        if rolling is None:
            errs.append(required("spec.strategy.rollingUpdate",
                                 "this should be defaulted and never be nil"))
        else:
            _rolling_update(rolling, errs)
    else:
        errs.append(not_supported("spec.strategy", strategy, ["Recreate", "RollingUpdate"]))


def int_or_percent(value: Any, path: str, errs: Errs) -> int:
    """ValidatePositiveIntOrPercent; returns the number (percent or count) for later checks."""
    if isinstance(value, str):
        msgs = is_valid_percent(value)
        for msg in msgs:
            errs.append(invalid(path, value, msg))
        return 0 if msgs else int(value[:-1])
    if value is None:
        return 0
    if is_int(value):
        if value < 0:
            errs.append(invalid(path, value, NEGATIVE))
        return value
    errs.append(invalid(path, value, "must be an integer or percentage (e.g '5%%')"))
    return 0


def _rolling_update(rolling: dict[str, Any], errs: Errs) -> None:
    path = "spec.strategy.rollingUpdate"
    unavailable = int_or_percent(rolling.get("maxUnavailable"), f"{path}.maxUnavailable", errs)
    surge = int_or_percent(rolling.get("maxSurge"), f"{path}.maxSurge", errs)
    if unavailable == 0 and surge == 0:
        errs.append(invalid(f"{path}.maxUnavailable", rolling.get("maxUnavailable"),
                            "may not be 0 when `maxSurge` is 0"))
    raw = rolling.get("maxUnavailable")
    if isinstance(raw, str) and not is_valid_percent(raw) and unavailable > 100:
        errs.append(invalid(f"{path}.maxUnavailable", raw, "must not be greater than 100%"))


def validate_deployment_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _deployment_spec(new, errs)
    _selector_immutable(new, old, errs)


def validate_deployment_status_update(new: dict[str, Any], old: dict[str, Any],
                                      errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    status = get_dict(new, "status", "", errs) or {}
    counts = status_counts(status, ("observedGeneration", "replicas", "updatedReplicas",
                              "readyReplicas", "availableReplicas", "unavailableReplicas"), errs)
    collisions = get_int(status, "collisionCount", "status", errs)
    validate_nonnegative(collisions, "status.collisionCount", errs)
    for name in ("updatedReplicas", "readyReplicas", "availableReplicas"):
        if counts[name] > counts["replicas"]:
            errs.append(invalid(f"status.{name}", counts[name], GREATER_THAN_REPLICAS))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        errs.append(invalid("status.availableReplicas", counts["availableReplicas"],
                            "cannot be greater than readyReplicas"))
    old_collisions = sub(old, "status", "collisionCount")
    if is_int(old_collisions) and (collisions is None or collisions < old_collisions):
        errs.append(invalid("status.collisionCount", collisions or 0, "cannot be decremented"))


# ---------------------------------------------------------------------------------------------
# autoscaling/v1 Scale


def validate_scale(scale: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(scale, True, name_is_dns_subdomain, errs)
    spec = get_dict(scale, "spec", "", errs) or {}
    replicas = get_int(spec, "replicas", "spec", errs)
    if replicas is not None and replicas < 0:
        errs.append(invalid("spec.replicas", replicas, NEGATIVE))

