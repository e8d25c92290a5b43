"""apps/v1 DaemonSets, StatefulSets and ControllerRevisions.

Kubernetes pieces: pkg/apis/apps/validation/validation.go (ValidateDaemonSet,
ValidateDaemonSetSpec, ValidateRollingUpdateDaemonSet, ValidateDaemonSetUpdate,
ValidateDaemonSetStatusUpdate, ValidateStatefulSet, ValidateStatefulSetSpec,
ValidateStatefulSetUpdate, ValidateStatefulSetStatus, ValidateControllerRevision,
ValidateControllerRevisionUpdate). The shared pod-template rules (restartPolicy Always, no
activeDeadlineSeconds, selector matching the template) come from workload.py, as upstream's
ValidatePodTemplateSpecForReplicaSet is shared too.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.errors import forbidden, invalid, not_supported, required
from minikube_py.api.validation.common import (
    name_is_dns_subdomain,
    semantic_equal,
    sub,
    validate_immutable,
    validate_nonnegative,
)
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.persistentvolumes import pvc_template_spec
from minikube_py.api.validation.typed import Errs, get_dict, get_int, iter_dicts
from minikube_py.api.validation.workload import (
    apps_selector_and_template,
    int_or_percent,
    status_counts,
)

UPDATE_TYPES = ("OnDelete", "RollingUpdate")
POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")
RETENTION_POLICIES = ("Delete", "Retain")
#: the StatefulSet spec fields an update may change (ValidateStatefulSetUpdate)
STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
               "persistentVolumeClaimRetentionPolicy", "minReadySeconds")
STS_UPDATE_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden")


# ---------------------------------------------------------------------------------------------
# DaemonSet


def validate_daemon_set(ds: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(ds, True, name_is_dns_subdomain, errs)
    _daemon_set_spec(ds, errs)


def _daemon_set_spec(ds: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(ds, "spec", "", errs) or {}
    apps_selector_and_template(spec, "DaemonSet", errs, "daemonset")
    validate_nonnegative(get_int(spec, "minReadySeconds", "spec", errs), "spec.minReadySeconds",
                         errs)
    validate_nonnegative(get_int(spec, "revisionHistoryLimit", "spec", errs),
                         "spec.revisionHistoryLimit", errs)
    strategy = get_dict(spec, "updateStrategy", "spec", errs) or {}
    kind = strategy.get("type")
    path = "spec.updateStrategy"
    if kind not in UPDATE_TYPES:  # upstream reports the whole strategy at its own path
        errs.append(not_supported(path, strategy, ("RollingUpdate", "OnDelete")))
    if kind == "RollingUpdate":
        rolling = get_dict(strategy, "rollingUpdate", path, errs)
        if rolling is None:
            errs.append(required(f"{path}.rollingUpdate"))
        else:
            _rolling_update_daemon_set(rolling, f"{path}.rollingUpdate", errs)


def _rolling_update_daemon_set(rolling: dict[str, Any], path: str, errs: Errs) -> None:
    """Exactly one of maxUnavailable and maxSurge is non-zero, neither above 100%."""
    unavailable = int_or_percent(rolling.get("maxUnavailable"), f"{path}.maxUnavailable", errs)
    surge = int_or_percent(rolling.get("maxSurge"), f"{path}.maxSurge", errs)
    for name, value in (("maxUnavailable", unavailable), ("maxSurge", surge)):
        if isinstance(rolling.get(name), str) and value > 100:
            errs.append(invalid(f"{path}.{name}", rolling[name], "must not be greater than 100%"))
    if unavailable and surge:
        errs.append(invalid(f"{path}.maxSurge", rolling.get("maxSurge"),
                            "may not be set when maxUnavailable is non-zero"))
    elif not unavailable and not surge:
        errs.append(required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))


def validate_daemon_set_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _daemon_set_spec(new, errs)
    validate_immutable(sub(new, "spec", "selector"), sub(old, "spec", "selector"),
                       "spec.selector", errs)


def validate_daemon_set_status(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    status = get_dict(new, "status", "", errs) or {}
    status_counts(status, ("currentNumberScheduled", "numberMisscheduled",
                           "desiredNumberScheduled", "numberReady", "observedGeneration",
                           "updatedNumberScheduled", "numberAvailable", "numberUnavailable",
                           "collisionCount"), errs)


# ---------------------------------------------------------------------------------------------
# StatefulSet


def validate_stateful_set(sts: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(sts, True, name_is_dns_subdomain, errs)
    _stateful_set_spec(sts, errs)


def _stateful_set_spec(sts: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(sts, "spec", "", errs) or {}
    policy = spec.get("podManagementPolicy")
    if policy is None or policy == "":
        errs.append(required("spec.podManagementPolicy"))
    elif policy not in POD_MANAGEMENT_POLICIES:
        errs.append(invalid("spec.podManagementPolicy", policy,
                            "must be 'OrderedReady' or 'Parallel'"))
    _stateful_update_strategy(get_dict(spec, "updateStrategy", "spec", errs) or {}, errs)
    retention = get_dict(spec, "persistentVolumeClaimRetentionPolicy", "spec", errs)
    if retention is not None:
        for name in ("whenDeleted", "whenScaled"):
            value = retention.get(name)
            if value not in RETENTION_POLICIES:
                errs.append(not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{name}",
                                          "" if value is None else value, RETENTION_POLICIES))
    validate_nonnegative(get_int(spec, "replicas", "spec", errs), "spec.replicas", errs)
    validate_nonnegative(get_int(spec, "minReadySeconds", "spec", errs), "spec.minReadySeconds",
                         errs)
    validate_nonnegative(get_int(spec, "revisionHistoryLimit", "spec", errs),
                         "spec.revisionHistoryLimit", errs)
    ordinals = get_dict(spec, "ordinals", "spec", errs)
    if ordinals is not None:
        validate_nonnegative(get_int(ordinals, "start", "spec.ordinals", errs),
                             "spec.ordinals.start", errs)
    apps_selector_and_template(_with_claim_volumes(spec), "StatefulSet", errs, "statefulset")
    for _, claim, path in iter_dicts(spec, "volumeClaimTemplates", "spec", errs):
        pvc_template_spec(get_dict(claim, "spec", path, errs) or {}, f"{path}.spec", errs)


def _with_claim_volumes(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with each claim template as a volume of its pod template, as the controller
    mounts them (upstream skips validating the pod spec for exactly this reason — "we should
    really check that the union of the given volumes and volumeClaims match volume mounts")."""
    claims = [c for c in spec.get("volumeClaimTemplates") or () if isinstance(c, dict)]
    template = spec.get("template")
    pod_spec = template.get("spec") if isinstance(template, dict) else None
    if not claims or not isinstance(pod_spec, dict):
        return spec
    volumes = pod_spec.get("volumes") or []
    if not isinstance(volumes, list):
        return spec
    names = {v.get("name") for v in volumes if isinstance(v, dict)}
    extra = [{"name": name, "persistentVolumeClaim": {"claimName": name}}
             for name in ((c.get("metadata") or {}).get("name") for c in claims)
             if isinstance(name, str) and name and name not in names]
    if not extra:
        return spec
    return {**spec, "template": {**template, "spec": {**pod_spec, "volumes": volumes + extra}}}


def _stateful_update_strategy(strategy: dict[str, Any], errs: Errs) -> None:
    path = "spec.updateStrategy"
    kind = strategy.get("type")
    rolling = get_dict(strategy, "rollingUpdate", path, errs)
    if kind is None or kind == "":
        errs.append(required(path))
    elif kind == "OnDelete":
        if rolling is not None:
            errs.append(invalid(f"{path}.rollingUpdate", rolling,
                                "only allowed for updateStrategy 'RollingUpdate'"))
    elif kind == "RollingUpdate":
        if rolling is not None:
            validate_nonnegative(get_int(rolling, "partition", f"{path}.rollingUpdate", errs),
                                 f"{path}.rollingUpdate.partition", errs)
    else:
        errs.append(invalid(path, strategy, "must be 'RollingUpdate' or 'OnDelete'"))


def validate_stateful_set_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _stateful_set_spec(new, errs)
    new_spec, old_spec = sub(new, "spec") or {}, sub(old, "spec") or {}
    if isinstance(new_spec, dict) and isinstance(old_spec, dict):
        rest_new = {k: v for k, v in new_spec.items() if k not in STS_MUTABLE}
        rest_old = {k: v for k, v in old_spec.items() if k not in STS_MUTABLE}
        if not semantic_equal(rest_new, rest_old):
            errs.append(forbidden("spec", STS_UPDATE_FORBIDDEN))


def validate_stateful_set_status(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    status = get_dict(new, "status", "", errs) or {}
    found = status_counts(status, ("replicas", "readyReplicas", "currentReplicas",
                                   "updatedReplicas", "availableReplicas", "observedGeneration",
                                   "collisionCount"), errs)
    for name in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        if found[name] > found["replicas"]:
            errs.append(invalid(f"status.{name}", found[name],
                                "cannot be greater than status.replicas"))
    if found["availableReplicas"] > found["readyReplicas"]:
        errs.append(invalid("status.availableReplicas", found["availableReplicas"],
                            "cannot be greater than status.readyReplicas"))


# ---------------------------------------------------------------------------------------------
# ControllerRevision


def validate_controller_revision(revision: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(revision, True, name_is_dns_subdomain, errs)
    if revision.get("data") is None:
        errs.append(required("data", "data is mandatory"))
    validate_nonnegative(get_int(revision, "revision", "", errs), "revision", errs)


def validate_controller_revision_update(new: dict[str, Any], old: dict[str, Any],
                                        errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    validate_controller_revision(new, errs)
    validate_immutable(new.get("data"), old.get("data"), "data", errs)
