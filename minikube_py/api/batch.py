"""batch/v1 vocabulary shared by the API server and the Job/CronJob controllers.

Kubernetes pieces: k8s.io/api/batch/v1 types.go (the label, annotation and finalizer names, the
condition types and reasons), pkg/registry/batch/job/strategy.go's `generateSelector` (the
labels and selector a Job gets unless `manualSelector: true`) and pkg/apis/batch/v1/defaults.go
(SetDefaults_Job, SetDefaults_CronJob). Pure functions of decoded JSON: no I/O, never raise on
oddly typed input (validation reports it afterwards).
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

#: labels generateSelector puts on a Job's pod template (legacy and prefixed forms)
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"

#: Indexed Jobs: the pod's index as an annotation and a label, and the env var
JOB_COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
JOB_COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
#: backoffLimitPerIndex: failures of the index so far
JOB_INDEX_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-failure-count"
#: the finalizer the Job controller keeps on its pods until it has counted them
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
#: CronJobs: the scheduled time of a Job they create
CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"

# Job condition types (JobConditionType) ---------------------------------------------------
JOB_COMPLETE = "Complete"
JOB_FAILED = "Failed"
JOB_SUSPENDED = "Suspended"
JOB_FAILURE_TARGET = "FailureTarget"
JOB_SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"

# Job condition reasons (batch/v1 JobReason*) ----------------------------------------------
REASON_BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
REASON_DEADLINE_EXCEEDED = "DeadlineExceeded"
REASON_POD_FAILURE_POLICY = "PodFailurePolicy"
REASON_MAX_FAILED_INDEXES_EXCEEDED = "MaxFailedIndexesExceeded"
REASON_FAILED_INDEXES = "FailedIndexes"
REASON_SUCCESS_POLICY = "SuccessPolicy"
REASON_COMPLETIONS_REACHED = "CompletionsReached"

MAX_INT32 = 2**31 - 1


def _dict(value: Any) -> Obj | None:
    return value if isinstance(value, dict) else None


def generate_selector(job: Obj) -> None:
    """Upstream generateSelector: unless `spec.manualSelector` is true, label the template with
    the Job's name and uid (legacy and `batch.kubernetes.io/` forms, keeping labels the user
    set) and select `batch.kubernetes.io/controller-uid=<uid>`. A wrong user value is left for
    validation to reject (the selector no longer matches the template)."""
    md = _dict(job.get("metadata")) or {}
    spec = _dict(job.get("spec"))
    uid, name = md.get("uid"), md.get("name")
    if spec is None or not uid or spec.get("manualSelector") is True:
        return
    template = _dict(spec.get("template"))
    if template is None:
        return
    tmeta = template.setdefault("metadata", {}) if template.get("metadata") is None else \
        _dict(template.get("metadata"))
    if tmeta is None:
        return
    labels = tmeta.setdefault("labels", {}) if tmeta.get("labels") is None else \
        _dict(tmeta.get("labels"))
    if labels is None:
        return
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, name or "")
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid)
    if spec.get("selector") is None:
        spec["selector"] = {}
    selector = _dict(spec.get("selector"))
    if selector is None:
        return
    if selector.get("matchLabels") is None:
        selector["matchLabels"] = {}
    match = _dict(selector.get("matchLabels"))
    if match is not None:
        match.setdefault(CONTROLLER_UID_LABEL, uid)


def default_job_spec(job: Obj) -> None:
    """SetDefaults_Job on the Job's own fields (the template's PodSpec is the caller's):
    completions and parallelism 1 when both are unset, parallelism 1, backoffLimit 6 (or
    MaxInt32 with backoffLimitPerIndex), completionMode NonIndexed, suspend false,
    podReplacementPolicy (Failed with a podFailurePolicy, else TerminatingOrFailed), the
    status `True` of onPodConditions patterns, and the Job's labels from its template's."""
    spec = _dict(job.get("spec"))
    if spec is None:
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    if spec.get("completionMode") in (None, ""):
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    policy = _dict(spec.get("podFailurePolicy"))
    if policy is not None:
        for rule in policy.get("rules") or ():
            for pattern in (rule.get("onPodConditions") or ()) if isinstance(rule, dict) else ():
                if isinstance(pattern, dict) and pattern.get("status") in (None, ""):
                    pattern["status"] = "True"
    if spec.get("podReplacementPolicy") in (None, ""):
        spec["podReplacementPolicy"] = "Failed" if policy is not None else "TerminatingOrFailed"
    generate_selector(job)
    template = _dict(spec.get("template")) or {}
    labels = (_dict(template.get("metadata")) or {}).get("labels")
    md = _dict(job.get("metadata"))
    if isinstance(labels, dict) and labels and md is not None and not md.get("labels"):
        md["labels"] = dict(labels)


def default_cron_job_spec(cron_job: Obj) -> None:
    """SetDefaults_CronJob: concurrencyPolicy Allow, suspend false, history limits 3 and 1
    (the embedded job template gets the Job defaults that apply to a spec)."""
    spec = _dict(cron_job.get("spec"))
    if spec is None:
        return
    if spec.get("concurrencyPolicy") in (None, ""):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = 3
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = 1


def job_condition(job: Obj, kind: str) -> Obj | None:
    """The Job's condition of `kind`, when its status is True."""
    for cond in (_dict(job.get("status")) or {}).get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == kind and cond.get("status") == "True":
            return cond
    return None


def is_job_finished(job: Obj) -> bool:
    """Complete or Failed (upstream IsJobFinished)."""
    return job_condition(job, JOB_COMPLETE) is not None or \
        job_condition(job, JOB_FAILED) is not None


def job_status_text(job: Obj) -> str:
    """The STATUS column of `kubectl get jobs` (printers.go printJob)."""
    if job_condition(job, JOB_COMPLETE):
        return "Complete"
    if job_condition(job, JOB_FAILED):
        return "Failed"
    if (_dict(job.get("metadata")) or {}).get("deletionTimestamp"):
        return "Terminating"
    if job_condition(job, JOB_SUSPENDED):
        return "Suspended"
    if job_condition(job, JOB_FAILURE_TARGET):
        return "FailureTarget"
    return "Running"
