"""batch/v1 Jobs and CronJobs.

Kubernetes pieces: pkg/apis/batch/validation/validation.go (ValidateJob, validateJobSpec,
validatePodFailurePolicy, validateSuccessPolicy, ValidateJobSpecUpdate, ValidateJobStatusUpdate,
ValidateCronJobCreate/Update, validateCronJobSpec, validateScheduleFormat, validateTimeZone) as
of 1.31. The schedule's syntax check is a callable (`schedule_error`) so this layer does not
import the cron library; api/cronschedule.py provides it.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from minikube_py.api import labels
from minikube_py.api.batch_indexes import parse_indexes
from minikube_py.api.cronschedule import schedule_error
from minikube_py.api.errors import forbidden, invalid, not_supported, required
from minikube_py.api.validation.common import (
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
    child,
    get_bool,
    get_dict,
    get_int,
    get_list,
    get_str,
    index,
)

SELECTOR_MISMATCH = "`selector` does not match template `labels`"
#: upstream maxParallelismForIndexedJob / maxCompletionsForIndexedJob-ish bound
MAX_INDEXED = 100000
#: a CronJob's name: 63 minus the 11 characters of "-<minutes since epoch>" its Jobs append
CRONJOB_NAME_MAX = 52
COMPLETION_MODES = ["Indexed", "NonIndexed"]
CONCURRENCY_POLICIES = ["Allow", "Forbid", "Replace"]
POD_FAILURE_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]
EXIT_CODE_OPERATORS = ["In", "NotIn"]
REPLACEMENT_POLICIES = ["Failed", "TerminatingOrFailed"]
JOB_RESTART_POLICIES = ["OnFailure", "Never"]


# ---------------------------------------------------------------------------------------------
# Job


def validate_job(job: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(job, True, name_is_dns_subdomain, errs)
    spec = get_dict(job, "spec", "", errs) or {}
    _job_spec(spec, "spec", errs, selector_required=True)


def _job_spec(spec: dict[str, Any], path: str, errs: Errs, *, selector_required: bool) -> None:
    """validateJobSpec: counts, modes, policies, selector and template."""
    parallelism = get_int(spec, "parallelism", path, errs)
    completions = get_int(spec, "completions", path, errs)
    validate_nonnegative(parallelism, child(path, "parallelism"), errs)
    validate_nonnegative(completions, child(path, "completions"), errs)
    for name in ("activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        validate_nonnegative(get_int(spec, name, path, errs), child(path, name), errs)
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and deadline == 0:
        errs.append(invalid(child(path, "activeDeadlineSeconds"), 0, "must be greater than 0"))
    mode = spec.get("completionMode")
    if mode is not None and mode not in COMPLETION_MODES:
        errs.append(not_supported(child(path, "completionMode"), mode, COMPLETION_MODES))
    indexed = mode == "Indexed"
    if indexed:
        if completions is None:
            errs.append(required(child(path, "completions"),
                                 "when completion mode is Indexed"))
        elif completions > MAX_INDEXED:
            errs.append(invalid(child(path, "completions"), completions,
                                f"must be less than or equal to {MAX_INDEXED} when completion "
                                "mode is Indexed"))
        if parallelism is not None and parallelism > MAX_INDEXED:
            errs.append(invalid(child(path, "parallelism"), parallelism,
                                f"must be less than or equal to {MAX_INDEXED} when completion "
                                "mode is Indexed"))
    _per_index(spec, path, indexed, completions, errs)
    policy = get_dict(spec, "podFailurePolicy", path, errs)
    if policy is not None:
        _pod_failure_policy(policy, child(path, "podFailurePolicy"), errs)
    _success_policy(spec, path, indexed, completions, errs)
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        if replacement not in REPLACEMENT_POLICIES:
            errs.append(not_supported(child(path, "podReplacementPolicy"), replacement,
                                      REPLACEMENT_POLICIES))
        elif policy is not None and replacement != "Failed":
            errs.append(not_supported(child(path, "podReplacementPolicy"), replacement,
                                      ["Failed"]))
    get_bool(spec, "suspend", path, errs)
    get_bool(spec, "manualSelector", path, errs)
    _selector_and_template(spec, path, errs, selector_required, policy is not None)


def _per_index(spec: dict[str, Any], path: str, indexed: bool, completions: int | None,
               errs: Errs) -> None:
    per_index = get_int(spec, "backoffLimitPerIndex", path, errs)
    max_failed = get_int(spec, "maxFailedIndexes", path, errs)
    if per_index is not None:
        validate_nonnegative(per_index, child(path, "backoffLimitPerIndex"), errs)
        if not indexed:
            errs.append(forbidden(child(path, "backoffLimitPerIndex"),
                                  "requires indexed completion mode"))
    if max_failed is not None:
        validate_nonnegative(max_failed, child(path, "maxFailedIndexes"), errs)
        if per_index is None:
            errs.append(required(child(path, "backoffLimitPerIndex"),
                                 "when maxFailedIndexes is specified"))
        if completions is not None and max_failed > completions:
            errs.append(invalid(child(path, "maxFailedIndexes"), max_failed,
                                "must be less than or equal to completions"))


def _pod_failure_policy(policy: dict[str, Any], path: str, errs: Errs) -> None:
    """validatePodFailurePolicy: each rule has a supported action and exactly one of
    onExitCodes / onPodConditions."""
    rules = get_list(policy, "rules", path, errs) or []
    rules_path = child(path, "rules")
    if len(rules) > 20:
        errs.append(invalid(rules_path, len(rules), "must have at most 20 elements"))
    for i, rule in enumerate(rules):
        rpath = index(rules_path, i)
        if not isinstance(rule, dict):
            errs.append(invalid(rpath, rule, "must be an object"))
            continue
        action = rule.get("action")
        if action is None or action == "":
            errs.append(required(child(rpath, "action"), ""))
        elif action not in POD_FAILURE_ACTIONS:
            errs.append(not_supported(child(rpath, "action"), action, POD_FAILURE_ACTIONS))
        exit_codes = get_dict(rule, "onExitCodes", rpath, errs)
        conditions = get_list(rule, "onPodConditions", rpath, errs)
        if exit_codes is not None and conditions:
            errs.append(invalid(rpath, "", "specifying both OnExitCodes and OnPodConditions "
                                "is not supported"))
        elif exit_codes is None and not conditions:
            errs.append(invalid(rpath, "", "specifying one of OnExitCodes and OnPodConditions "
                                "is required"))
        if exit_codes is not None:
            _on_exit_codes(exit_codes, action, child(rpath, "onExitCodes"), errs)
        for j, pattern in enumerate(conditions or ()):
            ppath = index(child(rpath, "onPodConditions"), j)
            if not isinstance(pattern, dict):
                errs.append(invalid(ppath, pattern, "must be an object"))
                continue
            if not pattern.get("type"):
                errs.append(required(child(ppath, "type"), ""))
            status = pattern.get("status")
            if status not in ("True", "False", "Unknown"):
                errs.append(not_supported(child(ppath, "status"), status,
                                          ["False", "True", "Unknown"]))


def _on_exit_codes(requirement: dict[str, Any], action: Any, path: str, errs: Errs) -> None:
    operator = requirement.get("operator")
    if operator not in EXIT_CODE_OPERATORS:
        errs.append(not_supported(child(path, "operator"), operator, EXIT_CODE_OPERATORS))
    values = get_list(requirement, "values", path, errs) or []
    vpath = child(path, "values")
    if not values:
        errs.append(invalid(vpath, values, "at least one value is required"))
    if len(values) > 255:
        errs.append(invalid(vpath, len(values), "must have at most 255 elements"))
    previous = None
    for i, value in enumerate(values):
        if not isinstance(value, int) or isinstance(value, bool):
            errs.append(invalid(index(vpath, i), value, "must be an integer"))
            continue
        if value == 0 and operator == "In" and action != "Ignore" and action is not None:
            errs.append(invalid(index(vpath, i), 0,
                                "must not be 0 for the In operator"))
        if previous is not None and value <= previous:
            errs.append(invalid(vpath, values, "must be ordered and without duplicates"))
            break
        previous = value
    container = requirement.get("containerName")
    if container is not None and not isinstance(container, str):
        errs.append(invalid(child(path, "containerName"), container, "must be a string"))


def _success_policy(spec: dict[str, Any], path: str, indexed: bool, completions: int | None,
                    errs: Errs) -> None:
    policy = get_dict(spec, "successPolicy", path, errs)
    if policy is None:
        return
    spath = child(path, "successPolicy")
    if not indexed:
        errs.append(invalid(spath, policy, "requires indexed completion mode"))
        return
    rules = get_list(policy, "rules", spath, errs) or []
    rules_path = child(spath, "rules")
    if not rules:
        errs.append(required(rules_path, "at least one rules must be specified when the "
                             "successPolicy is specified"))
    if len(rules) > 20:
        errs.append(invalid(rules_path, len(rules), "must have at most 20 elements"))
    for i, rule in enumerate(rules):
        rpath = index(rules_path, i)
        if not isinstance(rule, dict):
            errs.append(invalid(rpath, rule, "must be an object"))
            continue
        indexes = rule.get("succeededIndexes")
        count = get_int(rule, "succeededCount", rpath, errs)
        if indexes is None and count is None:
            errs.append(required(rpath, "at least one of succeededCount or succeededIndexes "
                                 "must be specified"))
        if indexes is not None:
            try:
                parse_indexes(indexes, completions or 0)
            except (TypeError, ValueError) as exc:
                errs.append(invalid(child(rpath, "succeededIndexes"), indexes, str(exc)))
        if count is not None:
            if count < 0:
                validate_nonnegative(count, child(rpath, "succeededCount"), errs)
            elif completions is not None and count > completions:
                errs.append(invalid(child(rpath, "succeededCount"), count,
                                    f"must be less than or equal to {completions} (the number "
                                    "of specified completions)"))


def _selector_and_template(spec: dict[str, Any], path: str, errs: Errs, selector_required: bool,
                           has_failure_policy: bool) -> None:
    selector = get_dict(spec, "selector", path, errs)
    template = get_dict(spec, "template", path, errs) or {}
    tpath = child(path, "template")
    if selector is None:
        if selector_required and spec.get("selector") is None:
            errs.append(required(child(path, "selector"), ""))
    else:
        validate_label_selector(selector, child(path, "selector"), errs)
        try:
            compiled = labels.selector_from_label_selector(selector)
        except Exception:  # noqa: BLE001 - reported by validate_label_selector
            compiled = None
        tlabels = sub(template, "metadata", "labels")
        if compiled is not None and not compiled.empty() and not compiled.matches(
                tlabels if isinstance(tlabels, dict) else {}):
            errs.append(invalid(child(tpath, "metadata.labels"), tlabels, SELECTOR_MISMATCH))
    if not template and spec.get("template") is None:
        errs.append(required(tpath, ""))
        return
    validate_pod_template_spec(template, tpath, errs)
    pod_spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    restart = pod_spec.get("restartPolicy")
    rpath = child(tpath, "spec.restartPolicy")
    if has_failure_policy and restart != "Never":
        errs.append(invalid(rpath, restart, "only \"Never\" is supported when podFailurePolicy "
                            "is specified"))
    elif restart not in JOB_RESTART_POLICIES:
        errs.append(not_supported(rpath, "" if restart is None else restart,
                                  JOB_RESTART_POLICIES))


def validate_job_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """ValidateJobUpdate: the create rules, plus what may not change. The template may change
    only while the Job is suspended and has never started (upstream allows scheduling
    directives; we allow the template as a whole there)."""
    validate_object_meta_update(new, old, errs)
    spec = get_dict(new, "spec", "", errs) or {}
    _job_spec(spec, "spec", errs, selector_required=True)
    old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    validate_immutable(spec.get("selector"), old_spec.get("selector"), "spec.selector", errs)
    for name in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex",
                 "successPolicy", "manualSelector"):
        validate_immutable(spec.get(name), old_spec.get(name), f"spec.{name}", errs)
    elastic = (spec.get("completionMode") == "Indexed"
               and spec.get("completions") == spec.get("parallelism")
               and old_spec.get("completions") == old_spec.get("parallelism"))
    if not elastic:
        validate_immutable(spec.get("completions"), old_spec.get("completions"),
                           "spec.completions", errs)
    started = sub(old, "status", "startTime") is not None
    if not (old_spec.get("suspend") is True and not started):
        validate_immutable(spec.get("template"), old_spec.get("template"), "spec.template",
                           errs)


def validate_job_status_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """ValidateJobStatusUpdate (the counter rules; upstream's transition checks are lenient
    for the controller that writes them)."""
    validate_object_meta_update(new, old, errs)
    status = get_dict(new, "status", "", errs) or {}
    for name in ("active", "succeeded", "failed", "ready", "terminating"):
        validate_nonnegative(get_int(status, name, "status", errs), f"status.{name}", errs)
    uncounted = get_dict(status, "uncountedTerminatedPods", "status", errs)
    if uncounted is not None:
        seen: set[str] = set()
        for name in ("succeeded", "failed"):
            for i, uid in enumerate(get_list(uncounted, name, "status.uncountedTerminatedPods",
                                             errs) or ()):
                upath = f"status.uncountedTerminatedPods.{name}[{i}]"
                if not uid:
                    errs.append(invalid(upath, uid, "must not be empty"))
                elif uid in seen:
                    errs.append(invalid(upath, uid, "must not have duplicates"))
                else:
                    seen.add(uid)


# ---------------------------------------------------------------------------------------------
# CronJob


def validate_cron_job(cron_job: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(cron_job, True, name_is_dns_subdomain, errs)
    name = sub(cron_job, "metadata", "name")
    if isinstance(name, str) and len(name) > CRONJOB_NAME_MAX:
        errs.append(invalid("metadata.name", name,
                            f"must be no more than {CRONJOB_NAME_MAX} characters"))
    _cron_job_spec(cron_job, errs)


def _cron_job_spec(cron_job: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(cron_job, "spec", "", errs) or {}
    schedule = get_str(spec, "schedule", "spec", errs)
    tz = spec.get("timeZone")
    if not schedule:
        errs.append(required("spec.schedule", ""))
    else:
        if "TZ=" in schedule:
            errs.append(invalid("spec.schedule", schedule, "cannot use TZ or CRON_TZ in "
                                "schedule, use timeZone field instead"))
        else:
            message = schedule_error(schedule)
            if message:
                errs.append(invalid("spec.schedule", schedule, message))
    if tz is not None and (not isinstance(tz, str) or not _valid_time_zone(tz)):
        errs.append(invalid("spec.timeZone", tz, f"unknown time zone {tz}"))
    policy = spec.get("concurrencyPolicy")
    if policy in (None, ""):
        errs.append(required("spec.concurrencyPolicy", ""))
    elif policy not in CONCURRENCY_POLICIES:
        errs.append(not_supported("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES))
    for name in ("startingDeadlineSeconds", "successfulJobsHistoryLimit",
                 "failedJobsHistoryLimit"):
        validate_nonnegative(get_int(spec, name, "spec", errs), f"spec.{name}", errs)
    get_bool(spec, "suspend", "spec", errs)
    job_template = get_dict(spec, "jobTemplate", "spec", errs)
    if job_template is None:
        errs.append(required("spec.jobTemplate", ""))
        return
    jt_spec = get_dict(job_template, "spec", "spec.jobTemplate", errs) or {}
    _job_spec(jt_spec, "spec.jobTemplate.spec", errs, selector_required=False)


def _valid_time_zone(name: str) -> bool:
    """Upstream validateTimeZone: an IANA name time.LoadLocation knows ("Local" is refused);
    a name is at most 255 characters and has no `..` so it cannot escape the zone database."""
    if not name or name == "Local" or len(name) > 255 or ".." in name or name.startswith("/"):
        return False
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def validate_cron_job_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _cron_job_spec(new, errs)


def validate_cron_job_status_update(new: dict[str, Any], old: dict[str, Any],
                                    errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    get_dict(new, "status", "", errs)
