"""The Job controller's decisions, as pure functions of a Job, its pods and the time.

Kubernetes pieces: pkg/controller/job/job_controller.go (syncJob's order of checks,
pastBackoffLimitOnFailure, pastActiveDeadline, trackJobStatusAndRemoveFinalizers' choice of
which pods to count, manageJob's wanted count, the pod-failure backoff), pod_failure_policy.go
(matchPodFailurePolicy), success_policy.go (matchSuccessPolicy), indexed_job_utils.go
(completion indexes, per-index backoff) and backoff_utils.go. Kept free of I/O so each rule is
a tested function and controllers/job.py is only the shell that reads and writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..api import batch as b
from ..api.batch_indexes import format_indexes, parse_indexes
from ..api.duration import parse_timestamp
from .conditions import get_condition, is_pod_ready

Obj = dict[str, Any]

#: upstream DefaultJobPodFailureBackOff / MaxJobPodFailureBackOff
POD_FAILURE_BACKOFF = 10.0
MAX_POD_FAILURE_BACKOFF = 600.0  # 10 min in upstream's code (its docs say 6 min)
UNKNOWN_INDEX = -1


def spec_of(job: Obj) -> Obj:
    spec = job.get("spec")
    return spec if isinstance(spec, dict) else {}


def status_of(obj: Obj) -> Obj:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def phase(pod: Obj) -> str:
    return status_of(pod).get("phase") or ""


def is_indexed(job: Obj) -> bool:
    return spec_of(job).get("completionMode") == "Indexed"


def has_finalizer(pod: Obj) -> bool:
    return b.JOB_TRACKING_FINALIZER in ((pod.get("metadata") or {}).get("finalizers") or ())


def uid_of(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("uid", "")


def completion_index(pod: Obj) -> int:
    """The pod's index annotation, or UNKNOWN_INDEX (upstream getCompletionIndex)."""
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(
        b.JOB_COMPLETION_INDEX_ANNOTATION)
    if not isinstance(text, str) or not text.isdigit():
        return UNKNOWN_INDEX
    return int(text)


def only_replace_failed(job: Obj) -> bool:
    """podReplacementPolicy Failed (forced by a podFailurePolicy): a terminating pod is
    replaced only once it is Failed."""
    spec = spec_of(job)
    return spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None


def is_pod_failed(pod: Obj, job: Obj) -> bool:
    """Upstream isPodFailed: Failed, or (unless only failed pods are replaced) deleted before
    it succeeded, so an orphan that never reached Failed still counts."""
    if phase(pod) == "Failed":
        return True
    if only_replace_failed(job):
        return False
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and phase(pod) != "Succeeded"


def is_active(pod: Obj) -> bool:
    return phase(pod) not in ("Succeeded", "Failed") and \
        not (pod.get("metadata") or {}).get("deletionTimestamp")


def is_terminating(pod: Obj) -> bool:
    return phase(pod) not in ("Succeeded", "Failed") and \
        bool((pod.get("metadata") or {}).get("deletionTimestamp"))


# ---------------------------------------------------------------------------------------------
# podFailurePolicy


@dataclass(frozen=True)
class PolicyMatch:
    """What matchPodFailurePolicy decided for one failed pod."""

    action: str | None  # None: no rule matched (count it)
    count_failed: bool
    message: str = ""


def _terminated_containers(pod: Obj) -> list[tuple[str, int]]:
    status = status_of(pod)
    out = []
    for key in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(key) or ():
            term = ((cs or {}).get("state") or {}).get("terminated")
            if isinstance(term, dict) and isinstance(term.get("exitCode"), int):
                out.append((cs.get("name", ""), term["exitCode"]))
    return out


def match_pod_failure_policy(policy: Obj | None, pod: Obj) -> PolicyMatch:
    if not policy:
        return PolicyMatch(None, True)
    md = pod.get("metadata") or {}
    who = f"{md.get('namespace', '')}/{md.get('name', '')}"
    for i, rule in enumerate(policy.get("rules") or ()):
        action = rule.get("action")
        on_codes = rule.get("onExitCodes")
        matched = ""
        if isinstance(on_codes, dict):
            values = set(on_codes.get("values") or ())
            wanted = on_codes.get("containerName")
            for name, code in _terminated_containers(pod):
                if code == 0 or (wanted and name != wanted):
                    continue
                hit = code in values if on_codes.get("operator") == "In" else code not in values
                if hit:
                    matched = (f"Container {name} for pod {who} failed with exit code {code} "
                               f"matching {action} rule at index {i}")
                    break
        for pattern in rule.get("onPodConditions") or ():
            cond = get_condition(pod, pattern.get("type", ""))
            if cond is not None and cond.get("status") == (pattern.get("status") or "True"):
                matched = (f"Pod {who} has condition {pattern.get('type')} matching {action} "
                           f"rule at index {i}")
                break
        if matched:
            return PolicyMatch(action, action not in ("Ignore",), matched)
    return PolicyMatch(None, True)


# ---------------------------------------------------------------------------------------------
# The state of one sync


@dataclass
class JobState:
    """Counts and sets one sync works from (upstream syncJobCtx)."""

    job: Obj
    pods: list[Obj]
    now: float
    succeeded: int = 0
    failed: int = 0
    uncounted_succeeded: set[str] = field(default_factory=set)
    uncounted_failed: set[str] = field(default_factory=set)
    succeeded_indexes: set[int] = field(default_factory=set)
    failed_indexes: set[int] = field(default_factory=set)
    #: pods whose finalizer this sync removes, and what they add to the counts
    finalize: list[Obj] = field(default_factory=list)
    new_succeeded: list[str] = field(default_factory=list)
    new_failed: list[str] = field(default_factory=list)
    fail_job_message: str = ""
    new_failures: bool = False

    @property
    def completions(self) -> int | None:
        value = spec_of(self.job).get("completions")
        return value if isinstance(value, int) else None

    def active(self) -> list[Obj]:
        return [p for p in self.pods if is_active(p)]

    def terminating(self) -> list[Obj]:
        return [p for p in self.pods if is_terminating(p)]


def build_state(job: Obj, pods: list[Obj], now: float, finishing: bool) -> JobState:
    """Read the Job's counters and decide which pods to count and finalize now
    (trackJobStatusAndRemoveFinalizers). `finishing`: the Job already has a terminal target
    condition, so every pod is finalized (and unfinished ones count as failed)."""
    status = status_of(job)
    spec = spec_of(job)
    uncounted = status.get("uncountedTerminatedPods") or {}
    state = JobState(job, pods, now, int(status.get("succeeded") or 0),
                     int(status.get("failed") or 0), set(uncounted.get("succeeded") or ()),
                     set(uncounted.get("failed") or ()))
    indexed = is_indexed(job)
    completions = state.completions or 0
    if indexed:
        try:
            state.succeeded_indexes = parse_indexes(status.get("completedIndexes") or "",
                                                    completions)
            state.failed_indexes = parse_indexes(status.get("failedIndexes") or "", completions)
        except (TypeError, ValueError):
            pass
    policy = spec.get("podFailurePolicy")
    per_index = spec.get("backoffLimitPerIndex")
    for pod in pods:
        if not has_finalizer(pod):
            continue
        uid = uid_of(pod)
        considered_failed = is_pod_failed(pod, job)
        succeeded = phase(pod) == "Succeeded"
        failing_job = finishing and get_condition(job, b.JOB_FAILURE_TARGET) is not None
        if not (finishing or succeeded or considered_failed
                or (job.get("metadata") or {}).get("deletionTimestamp")):
            continue
        if policy is not None and considered_failed and phase(pod) != "Failed" and not finishing:
            continue  # wait for the kubelet's Failed, the policy matches on it
        state.finalize.append(pod)
        ix = completion_index(pod)
        if succeeded and uid not in state.uncounted_failed:
            if indexed:
                if 0 <= ix < completions and ix not in state.succeeded_indexes:
                    state.succeeded_indexes.add(ix)
                    state.new_succeeded.append(uid)
            elif uid not in state.uncounted_succeeded:
                state.new_succeeded.append(uid)
        elif (considered_failed or failing_job) and uid not in state.uncounted_failed and \
                (not indexed or 0 <= ix < completions):
            match = match_pod_failure_policy(policy, pod)
            if match.action == "FailJob" and not state.fail_job_message:
                state.fail_job_message = match.message
            if indexed and (match.action == "FailIndex" or (
                    per_index is not None and match.count_failed
                    and recorded_index_failures(pod) >= per_index)):
                state.failed_indexes.add(ix)
            if match.count_failed:
                state.new_failed.append(uid)
                state.new_failures = True
    return state


def recorded_index_failures(pod: Obj) -> int:
    """Failures of the pod's index before this pod (its annotation; upstream
    getIndexFailureCount): a failed pod fails its index once this reaches the limit."""
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(
        b.JOB_INDEX_FAILURE_COUNT_ANNOTATION, "0")
    return int(text) if isinstance(text, str) and text.isdigit() else 0


def index_failure_count(pod: Obj) -> int:
    """Failures of the pod's index including its own (the next pod's annotation)."""
    return recorded_index_failures(pod) + (1 if phase(pod) == "Failed" else 0)


# ---------------------------------------------------------------------------------------------
# Finishing


@dataclass(frozen=True)
class Finish:
    """The condition a Job moves to: FailureTarget/Failed or SuccessCriteriaMet/Complete."""

    failed: bool
    reason: str
    message: str


BACKOFF_MESSAGE = "Job has reached the specified backoff limit"
DEADLINE_MESSAGE = "Job was active longer than specified deadline"
MAX_FAILED_INDEXES_MESSAGE = "Job has exceeded the specified maximal number of failed indexes"
FAILED_INDEXES_MESSAGE = "Job has failed indexes"


def past_backoff_limit_on_failure(job: Obj, pods: list[Obj]) -> bool:
    """restartPolicy OnFailure: container restarts of active pods count as failures."""
    spec = spec_of(job)
    template_spec = (spec.get("template") or {}).get("spec") or {}
    if template_spec.get("restartPolicy") != "OnFailure":
        return False
    limit = int(spec.get("backoffLimit") or 0)
    restarts = 0
    for pod in pods:
        if phase(pod) not in ("Running", "Pending"):
            continue
        status = status_of(pod)
        for key in ("initContainerStatuses", "containerStatuses"):
            for cs in status.get(key) or ():
                restarts += int((cs or {}).get("restartCount") or 0)
    return restarts > 0 if limit == 0 else restarts >= limit


def deadline_remaining(job: Obj, now: float) -> float | None:
    """Seconds until activeDeadlineSeconds runs out (<= 0: past), None without one."""
    deadline = spec_of(job).get("activeDeadlineSeconds")
    started = parse_timestamp(status_of(job).get("startTime"))
    if not isinstance(deadline, int) or started is None:
        return None
    return started + deadline - now


def failure_finish(state: JobState) -> Finish | None:
    """The failure a sync detects, in upstream's order of checks."""
    job = state.job
    spec = spec_of(job)
    target = get_condition(job, b.JOB_FAILURE_TARGET)
    if target is not None and target.get("status") == "True":
        return Finish(True, target.get("reason", ""), target.get("message", ""))
    if state.fail_job_message:
        return Finish(True, b.REASON_POD_FAILURE_POLICY, state.fail_job_message)
    failed = state.failed + len(state.uncounted_failed) + len(state.new_failed)
    limit = int(spec.get("backoffLimit") if spec.get("backoffLimit") is not None else 6)
    per_index = spec.get("backoffLimitPerIndex")
    if per_index is None and (failed > limit or past_backoff_limit_on_failure(job, state.pods)):
        return Finish(True, b.REASON_BACKOFF_LIMIT_EXCEEDED, BACKOFF_MESSAGE)
    remaining = deadline_remaining(job, state.now)
    if remaining is not None and remaining <= 0:
        return Finish(True, b.REASON_DEADLINE_EXCEEDED, DEADLINE_MESSAGE)
    if per_index is not None and is_indexed(job):
        max_failed = spec.get("maxFailedIndexes")
        if isinstance(max_failed, int) and len(state.failed_indexes) > max_failed:
            return Finish(True, b.REASON_MAX_FAILED_INDEXES_EXCEEDED, MAX_FAILED_INDEXES_MESSAGE)
        done = state.succeeded_indexes | state.failed_indexes
        if state.failed_indexes and len(done) >= (state.completions or 0):
            return Finish(True, b.REASON_FAILED_INDEXES, FAILED_INDEXES_MESSAGE)
    return None


def success_policy_match(job: Obj, succeeded_indexes: set[int]) -> str | None:
    """matchSuccessPolicy: the message of the first rule the succeeded indexes satisfy."""
    policy = spec_of(job).get("successPolicy")
    if not isinstance(policy, dict) or not is_indexed(job):
        return None
    completions = spec_of(job).get("completions") or 0
    for i, rule in enumerate(policy.get("rules") or ()):
        wanted: set[int] | None = None
        if rule.get("succeededIndexes") is not None:
            try:
                wanted = parse_indexes(rule["succeededIndexes"], completions)
            except (TypeError, ValueError):
                continue
        pool = succeeded_indexes if wanted is None else succeeded_indexes & wanted
        count = rule.get("succeededCount")
        if wanted is not None and count is None and wanted <= succeeded_indexes:
            return f"Matched rules at index {i}"
        if count is not None and len(pool) >= count:
            return f"Matched rules at index {i}"
    return None


def success_finish(state: JobState) -> Finish | None:
    job = state.job
    existing = get_condition(job, b.JOB_SUCCESS_CRITERIA_MET)
    if existing is not None and existing.get("status") == "True":
        return Finish(False, existing.get("reason", ""), existing.get("message", ""))
    if is_indexed(job):
        message = success_policy_match(job, state.succeeded_indexes)
        if message is not None:
            return Finish(False, b.REASON_SUCCESS_POLICY, message)
        if len(state.succeeded_indexes) >= (state.completions or 0):
            return Finish(False, "", "")
        return None
    succeeded = state.succeeded + len(state.uncounted_succeeded) + len(state.new_succeeded)
    completions = state.completions
    if completions is not None:
        return Finish(False, "", "") if succeeded >= completions else None
    # a work queue: done once one pod succeeded and none is still running
    if succeeded > 0 and not state.active():
        return Finish(False, "", "")
    return None


# ---------------------------------------------------------------------------------------------
# Managing pods


def wanted_active(state: JobState) -> int:
    """How many pods should be running (upstream manageJob's wantActive)."""
    spec = spec_of(state.job)
    parallelism = int(spec.get("parallelism") if spec.get("parallelism") is not None else 1)
    if is_indexed(state.job):
        remaining = (state.completions or 0) - len(state.succeeded_indexes | state.failed_indexes)
        return max(0, min(parallelism, remaining))
    succeeded = state.succeeded + len(state.uncounted_succeeded) + len(state.new_succeeded)
    if state.completions is None:
        return 0 if succeeded > 0 else parallelism
    return max(0, min(parallelism, state.completions - succeeded))


def indexes_to_create(state: JobState, count: int) -> list[int]:
    """The lowest indexes neither done, failed nor held by an active (or, with
    podReplacementPolicy Failed, terminating) pod (upstream firstPendingIndexes)."""
    held = {completion_index(p) for p in state.active()}
    if only_replace_failed(state.job):
        held |= {completion_index(p) for p in state.terminating()}
    taken = held | state.succeeded_indexes | state.failed_indexes
    out = []
    for ix in range(state.completions or 0):
        if len(out) >= count:
            break
        if ix not in taken:
            out.append(ix)
    return out


def previous_index_failures(state: JobState, ix: int) -> int:
    """Failures recorded for `ix` so far: the highest count among its failed pods."""
    return max((index_failure_count(p) for p in state.pods
                if completion_index(p) == ix and phase(p) == "Failed"), default=0)


def pod_failure_backoff(pods: list[Obj], failures: int, now: float, base: float) -> float:
    """Seconds to wait before creating a replacement after `failures` failures: base *
    2^(failures-1) after the last failure, at most 6 minutes (upstream backoffRecord)."""
    if failures <= 0:
        return 0.0
    delay = min(base * 2 ** (failures - 1), MAX_POD_FAILURE_BACKOFF)
    last = 0.0
    for pod in pods:
        if phase(pod) != "Failed":
            continue
        for key in ("containerStatuses", "initContainerStatuses"):
            for cs in status_of(pod).get(key) or ():
                term = ((cs or {}).get("state") or {}).get("terminated") or {}
                ts = parse_timestamp(term.get("finishedAt"))
                if ts is not None:
                    last = max(last, ts)
    if not last:
        return 0.0
    return max(0.0, last + delay - now)


def indexed_env(template: Obj) -> Obj:
    """The pod template with JOB_COMPLETION_INDEX (from the index annotation) in every
    container's env (upstream addCompletionIndexEnvVariables)."""
    spec = dict(template.get("spec") or {})
    env_var = {"name": b.JOB_COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {
        "apiVersion": "v1",
        "fieldPath": f"metadata.annotations['{b.JOB_COMPLETION_INDEX_ANNOTATION}']"}}}
    for key in ("initContainers", "containers"):
        containers = []
        for c in spec.get(key) or ():
            env = list(c.get("env") or ())
            if not any(e.get("name") == b.JOB_COMPLETION_INDEX_ENV for e in env):
                env.append(env_var)
            containers.append({**c, "env": env})
        if key in spec:
            spec[key] = containers
    return {**template, "spec": spec}


def pod_template_for(job: Obj, ix: int | None, index_failures: int = 0) -> Obj:
    """The template a new pod is made from: the finalizer; for an Indexed Job the index
    annotation and label, the env var and hostname `<job>-<index>`."""
    template = spec_of(job).get("template") or {}
    tmeta = dict(template.get("metadata") or {})
    tmeta["finalizers"] = [*(tmeta.get("finalizers") or ()), b.JOB_TRACKING_FINALIZER]
    out = {**template, "metadata": tmeta}
    if ix is None:
        return out
    annotations = dict(tmeta.get("annotations") or {})
    annotations[b.JOB_COMPLETION_INDEX_ANNOTATION] = str(ix)
    if spec_of(job).get("backoffLimitPerIndex") is not None:
        annotations[b.JOB_INDEX_FAILURE_COUNT_ANNOTATION] = str(index_failures)
    tmeta["annotations"] = annotations
    tmeta["labels"] = {**(tmeta.get("labels") or {}), b.JOB_COMPLETION_INDEX_ANNOTATION: str(ix)}
    out = indexed_env({**template, "metadata": tmeta})
    spec = dict(out.get("spec") or {})
    if not spec.get("hostname"):
        spec["hostname"] = f"{(job.get('metadata') or {}).get('name', '')}-{ix}"
    out["spec"] = spec
    return out


def ready_count(pods: list[Obj]) -> int:
    return sum(1 for p in pods if is_active(p) and is_pod_ready(p))


def indexes_text(indexes: set[int]) -> str:
    return format_indexes(indexes)
