"""The deployment controller's decisions, as pure functions over Deployment and ReplicaSet
dicts: template hash, surge/unavailable arithmetic, which ReplicaSet is new, how far to scale
each one, annotations, cleanup. (The status it reports is deployment_status.)

Kubernetes piece: pkg/controller/deployment/util/deployment_util.go (FindNewReplicaSet,
FindOldReplicaSets, NewRSNewReplicas, MaxSurge/MaxUnavailable/ResolveFenceposts,
SetNewReplicaSetAnnotations, GetProportion, IsSaturated), controller_utils.go's ComputeHash,
the arithmetic halves of rolling.go (reconcileOldReplicaSets, cleanupUnhealthyReplicas,
scaleDownOldReplicaSetsForRollingUpdate), recreate.go (oldPodsRunning) and sync.go (scale,
cleanupDeployment). The controller (deployment.py) only reads the caches and
writes what these functions decide, so the rollout rules are tested without a server.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from ..api.errors import StatusError
from .controller_utils import by_creation, controller_ref, label_selector

Obj = dict[str, Any]

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"  # apps.DefaultDeploymentUniqueLabelKey
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
ROLLBACK_TO_ANNOTATION = "deprecated.deployment.rollback.to"
#: annotations never copied from a Deployment to its ReplicaSets (annotationsToSkip)
ANNOTATIONS_TO_SKIP = frozenset({
    LAST_APPLIED_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
    DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, ROLLBACK_TO_ANNOTATION})
MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000

# condition types and reasons (apps/v1 and deployment_util.go)
AVAILABLE = "Available"
PROGRESSING = "Progressing"
REPLICA_FAILURE = "ReplicaFailure"
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"
NEW_RS_REASON = "NewReplicaSetCreated"
FOUND_NEW_RS_REASON = "FoundNewReplicaSet"
RS_UPDATED_REASON = "ReplicaSetUpdated"
NEW_RS_AVAILABLE_REASON = "NewReplicaSetAvailable"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
FAILED_RS_CREATE_REASON = "ReplicaSetCreateError"
PAUSED_REASON = "DeploymentPaused"
RESUMED_REASON = "DeploymentResumed"

RECREATE = "Recreate"
ROLLING_UPDATE = "RollingUpdate"
_MAX_INT32 = 2**31 - 1


# ---------------------------------------------------------------------------------------------
# Hashing and template comparison


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bits (Go hash/fnv New32a)."""
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


_SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def safe_encode_string(text: str) -> str:
    """apimachinery rand.SafeEncodeString: each byte mapped into an alphabet without vowels
    (no words in names) and without 0/1/3 (no look-alikes)."""
    return "".join(_SAFE_ALPHANUMS[b % len(_SAFE_ALPHANUMS)] for b in text.encode())


def compute_hash(template: Obj, collision_count: int | None = None) -> str:
    """The pod-template-hash (upstream controller.ComputeHash): FNV-32a over the template,
    then the collision count as 8 little-endian bytes, decimal, safe-encoded. Upstream
    hashes Go's spew dump of the struct; we hash the canonical JSON (sorted keys, empties
    dropped as Go's omitempty would), so equal templates hash equal and a changed one
    differently, which is all the hash is for."""
    data = orjson.dumps(_canonical(template), option=orjson.OPT_SORT_KEYS)
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4)
    h = fnv32a(data)
    return safe_encode_string(str(h))


def _canonical(value: Any) -> Any:
    """Drop nulls, empty maps and empty lists (Go's nil and empty compare equal, and a JSON
    round trip may add `creationTimestamp: null`)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = _canonical(v)
            if v is None or v == {} or v == []:
                continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def _without_hash(template: Obj | None) -> Obj:
    template = _canonical(template or {})
    labels = (template.get("metadata") or {}).get("labels")
    if labels and POD_TEMPLATE_HASH_LABEL in labels:
        labels = {k: v for k, v in labels.items() if k != POD_TEMPLATE_HASH_LABEL}
        template["metadata"] = {**template["metadata"], "labels": labels}
        if not labels:
            del template["metadata"]["labels"]
            if not template["metadata"]:
                del template["metadata"]
    return template


def equal_ignore_hash(a: Obj | None, b: Obj | None) -> bool:
    """Templates equal but for the pod-template-hash label (upstream EqualIgnoreHash)."""
    return _without_hash(a) == _without_hash(b)


# ---------------------------------------------------------------------------------------------
# Small accessors


def replicas(obj: Obj | None) -> int:
    """`spec.replicas` (defaulted to 1 by the API server)."""
    if obj is None:
        return 0
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def status_count(obj: Obj | None, name: str) -> int:
    return int(((obj or {}).get("status") or {}).get(name) or 0)


def annotations(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def revision(obj: Obj) -> int:
    """The revision annotation as a number; 0 when missing or malformed."""
    try:
        return int(annotations(obj).get(REVISION_ANNOTATION, "0"))
    except ValueError:
        return 0


def max_revision(rss: Iterable[Obj]) -> int:
    return max((revision(rs) for rs in rss), default=0)


def by_revision(rs: Obj) -> tuple[int, float, str]:
    """Sort key: lowest revision first, ties oldest first (ReplicaSetsByRevision)."""
    return (revision(rs), *by_creation(rs))


def strategy_type(d: Obj) -> str:
    return ((d.get("spec") or {}).get("strategy") or {}).get("type") or ROLLING_UPDATE


def is_rolling_update(d: Obj) -> bool:
    return strategy_type(d) == ROLLING_UPDATE


def has_progress_deadline(d: Obj) -> bool:
    deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
    return deadline is not None and int(deadline) != _MAX_INT32


def has_revision_history_limit(d: Obj) -> bool:
    limit = (d.get("spec") or {}).get("revisionHistoryLimit")
    return limit is not None and int(limit) != _MAX_INT32


def total_replicas(rss: Iterable[Obj | None]) -> int:
    """Sum of spec.replicas (GetReplicaCountForReplicaSets)."""
    return sum(replicas(rs) for rs in rss if rs is not None)


def total_status(rss: Iterable[Obj | None], name: str) -> int:
    """Sum of a status count (GetActual/Ready/AvailableReplicaCountForReplicaSets)."""
    return sum(status_count(rs, name) for rs in rss if rs is not None)


def filter_active(rss: Iterable[Obj | None]) -> list[Obj]:
    """ReplicaSets with replicas wanted (FilterActiveReplicaSets)."""
    return [rs for rs in rss if rs is not None and replicas(rs) > 0]


# ---------------------------------------------------------------------------------------------
# Surge and unavailability


def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int, or "N%" of `total`."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise ValueError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%"):
        raise ValueError(f"invalid value for IntOrString: invalid type: string is not a "
                         f"percentage: {text!r}")
    percent = int(text[:-1])
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """(surge, unavailable): surge rounds up, unavailable down; both 0 would deadlock a
    rollout, so unavailable becomes 1 (upstream ResolveFenceposts)."""
    surge = scaled_value(max_surge, desired, True)
    unavailable = scaled_value(max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _rolling(d: Obj) -> Obj:
    return ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}


def max_surge(d: Obj) -> int:
    if not is_rolling_update(d):
        return 0
    rolling = _rolling(d)
    return resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"),
                              replicas(d))[0]


def max_unavailable(d: Obj) -> int:
    desired = replicas(d)
    if not is_rolling_update(d) or desired == 0:
        return 0
    rolling = _rolling(d)
    unavailable = resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"),
                                     desired)[1]
    return min(unavailable, desired)


# ---------------------------------------------------------------------------------------------
# New and old ReplicaSets


def find_new_replica_set(d: Obj, rss: Sequence[Obj]) -> Obj | None:
    """The oldest ReplicaSet whose template equals the Deployment's (FindNewReplicaSet)."""
    template = (d.get("spec") or {}).get("template")
    for rs in sorted(rss, key=by_creation):
        if equal_ignore_hash((rs.get("spec") or {}).get("template"), template):
            return rs
    return None


def find_old_replica_sets(d: Obj, rss: Sequence[Obj],
                          new_rs: Obj | None = None) -> tuple[list[Obj], list[Obj]]:
    """(old ReplicaSets with replicas wanted, all old ReplicaSets) (FindOldReplicaSets)."""
    if new_rs is None:
        new_rs = find_new_replica_set(d, rss)
    new_uid = (new_rs or {}).get("metadata", {}).get("uid")
    every = [rs for rs in rss if new_rs is None or rs["metadata"].get("uid") != new_uid]
    return [rs for rs in every if replicas(rs) != 0], every


def new_rs_new_replicas(d: Obj, all_rss: Iterable[Obj | None], new_rs: Obj) -> int:
    """How big the new ReplicaSet may be now (NewRSNewReplicas): under RollingUpdate, up
    to replicas + maxSurge pods in all; under Recreate, the full count."""
    if not is_rolling_update(d):
        return replicas(d)
    max_total = replicas(d) + max_surge(d)
    current = total_replicas(all_rss)
    if current >= max_total:
        return replicas(new_rs)
    scale_up = min(max_total - current, replicas(d) - replicas(new_rs))
    return replicas(new_rs) + scale_up


def new_replica_set(d: Obj, template_hash: str, replica_count: int) -> Obj:
    """The ReplicaSet object for the Deployment's current template (getNewReplicaSet):
    `<deploy>-<hash>`, the hash label added to its selector, template and labels."""
    md = d["metadata"]
    spec = d.get("spec") or {}
    template = copy.deepcopy(spec.get("template") or {})
    tmeta = template.setdefault("metadata", {})
    labels = {**(tmeta.get("labels") or {}), POD_TEMPLATE_HASH_LABEL: template_hash}
    tmeta["labels"] = labels
    selector = copy.deepcopy(spec.get("selector") or {})
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}),
                               POD_TEMPLATE_HASH_LABEL: template_hash}
    rs_spec: Obj = {"replicas": replica_count, "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                    "selector": selector, "template": template}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"{md['name']}-{template_hash}", "namespace": md["namespace"],
                         "labels": dict(labels),
                         "ownerReferences": [controller_ref(d, "apps/v1", "Deployment")]},
            "spec": rs_spec}


# ---------------------------------------------------------------------------------------------
# Annotations


def copy_deployment_annotations(d: Obj, rs: Obj) -> bool:
    """Copy the Deployment's annotations to the ReplicaSet, except the controller's own
    (copyDeploymentAnnotationsToReplicaSet). Mutates `rs`; returns whether it changed."""
    rs_ann = rs.setdefault("metadata", {}).setdefault("annotations", {})
    changed = False
    for k, v in annotations(d).items():
        if k in ANNOTATIONS_TO_SKIP or rs_ann.get(k) == v:
            continue
        rs_ann[k] = v
        changed = True
    return changed


def set_replicas_annotations(rs: Obj, desired: int, max_replicas: int) -> bool:
    rs_ann = rs.setdefault("metadata", {}).setdefault("annotations", {})
    changed = False
    for key, value in ((DESIRED_REPLICAS_ANNOTATION, str(desired)),
                       (MAX_REPLICAS_ANNOTATION, str(max_replicas))):
        if rs_ann.get(key) != value:
            rs_ann[key] = value
            changed = True
    return changed


def replicas_annotations_need_update(rs: Obj, desired: int, max_replicas: int) -> bool:
    ann = annotations(rs)
    return (ann.get(DESIRED_REPLICAS_ANNOTATION) != str(desired)
            or ann.get(MAX_REPLICAS_ANNOTATION) != str(max_replicas))


def _int_annotation(rs: Obj, key: str) -> int | None:
    try:
        return int(annotations(rs)[key])
    except (KeyError, ValueError):
        return None


def set_new_replica_set_annotations(d: Obj, rs: Obj, new_revision: str, exists: bool,
                                    limit: int = MAX_REV_HISTORY_LENGTH_IN_CHARS) -> bool:
    """Deployment annotations, the revision (keeping the ones it had in revision-history
    when an old ReplicaSet becomes new again — a rollback), and for a new ReplicaSet the
    desired/max replicas (SetNewReplicaSetAnnotations). Mutates `rs`."""
    changed = copy_deployment_annotations(d, rs)
    rs_ann = rs["metadata"]["annotations"]
    old_revision = rs_ann.get(REVISION_ANNOTATION)
    try:
        old_int = int(old_revision) if old_revision is not None else 0
    except ValueError:
        if old_revision != "":
            return False
        old_int = 0
    try:
        new_int = int(new_revision)
    except ValueError:
        return False
    if old_int < new_int:
        rs_ann[REVISION_ANNOTATION] = new_revision
        changed = True
        if old_revision is not None:
            history = rs_ann.get(REVISION_HISTORY_ANNOTATION, "")
            if not history:
                rs_ann[REVISION_HISTORY_ANNOTATION] = old_revision
            else:
                olds = history.split(",")
                total = len(history) + len(old_revision) + 1
                start = 0
                while total > limit and start < len(olds):
                    total -= len(olds[start]) + 1
                    start += 1
                if total <= limit:
                    rs_ann[REVISION_HISTORY_ANNOTATION] = ",".join([*olds[start:], old_revision])
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    return changed


# ---------------------------------------------------------------------------------------------
# Scaling


def is_saturated(d: Obj, rs: Obj | None) -> bool:
    """The ReplicaSet runs the Deployment's full count, all available (IsSaturated)."""
    if rs is None:
        return False
    desired = _int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)
    want = replicas(d)
    return (desired is not None and replicas(rs) == want and desired == want
            and status_count(rs, "availableReplicas") == want)


def find_active_or_latest(new_rs: Obj | None, old_rss: Sequence[Obj]) -> Obj | None:
    """The one ReplicaSet with replicas, or the newest when none has any; None when
    several are active (FindActiveOrLatest)."""
    if new_rs is None and not old_rss:
        return None
    olds = sorted(old_rss, key=by_creation, reverse=True)
    active = filter_active([*olds, new_rs])
    if not active:
        return new_rs if new_rs is not None else olds[0]
    return active[0] if len(active) == 1 else None


def _round_half_away(x: float) -> int:
    return int(x - 0.5) if x < 0 else int(x + 0.5)


def replica_set_fraction(rs: Obj, d: Obj) -> int:
    """How many replicas `rs` should gain or lose in a proportional scale
    (getReplicaSetFraction), from its max-replicas annotation."""
    if replicas(d) == 0:
        return -replicas(rs)
    deployment_replicas = replicas(d) + max_surge(d)
    annotated = _int_annotation(rs, MAX_REPLICAS_ANNOTATION)
    if annotated is None:
        annotated = status_count(d, "replicas")
    if not annotated:
        return 0
    return _round_half_away(replicas(rs) * deployment_replicas / annotated) - replicas(rs)


def proportion(rs: Obj | None, d: Obj, to_add: int, added: int) -> int:
    """GetProportion: the fraction, bounded by what is left to add or remove."""
    if rs is None or replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = replica_set_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def proportional_scale(d: Obj, active_rss: Sequence[Obj]) -> tuple[list[tuple[Obj, int]], str]:
    """New sizes of the active ReplicaSets when a Deployment is resized mid-rollout
    (the proportional half of upstream `scale`): replicas + maxSurge shared out by each
    ReplicaSet's share, leftovers to the largest. Returns ([(rs, size)], "up"|"down"|"")."""
    rss = list(active_rss)
    allowed = replicas(d) + max_surge(d) if replicas(d) > 0 else 0
    to_add = allowed - total_replicas(rss)
    operation = ""
    if to_add != 0:
        # larger first; on ties newer first when growing (ReplicaSetsBySizeNewer), older
        # first when shrinking (ReplicaSetsBySizeOlder)
        rss.sort(key=by_creation, reverse=to_add > 0)
        rss.sort(key=lambda rs: -replicas(rs))
        operation = "up" if to_add > 0 else "down"
    added = 0
    sizes: list[int] = []
    for rs in rss:
        if to_add != 0:
            share = proportion(rs, d, to_add, added)
            sizes.append(replicas(rs) + share)
            added += share
        else:
            sizes.append(replicas(rs))
    if rss and to_add != 0:
        sizes[0] = max(0, sizes[0] + to_add - added)
    return list(zip(rss, sizes)), operation


def scaling_event(d: Obj, active_rss: Iterable[Obj]) -> bool:
    """Was the Deployment resized since its ReplicaSets were annotated (isScalingEvent)?"""
    for rs in active_rss:
        desired = _int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)
        if desired is not None and desired != replicas(d):
            return True
    return False


def old_scale_down_budget(d: Obj, all_rss: Sequence[Obj], new_rs: Obj | None) -> int:
    """How many old replicas may go now without breaking availability (the head of
    reconcileOldReplicaSets): all pods - (replicas - maxUnavailable) - new RS's unavailable
    pods (they may never become available, so they do not count)."""
    min_available = replicas(d) - max_unavailable(d)
    new_unavailable = replicas(new_rs) - status_count(new_rs, "availableReplicas")
    return total_replicas(all_rss) - min_available - new_unavailable


def cleanup_unhealthy_plan(old_rss: Sequence[Obj], max_cleanup: int) -> list[tuple[Obj, int]]:
    """Scale down old ReplicaSets' unavailable replicas first, oldest first, at most
    `max_cleanup` in all (cleanupUnhealthyReplicas)."""
    plan: list[tuple[Obj, int]] = []
    done = 0
    for rs in sorted(old_rss, key=by_creation):
        if done >= max_cleanup:
            break
        want, available = replicas(rs), status_count(rs, "availableReplicas")
        if want == 0 or want == available:
            continue
        count = min(max_cleanup - done, want - available)
        plan.append((rs, want - count))
        done += count
    return plan


def scale_down_old_plan(d: Obj, all_rss: Sequence[Obj],
                        old_rss: Sequence[Obj]) -> list[tuple[Obj, int]]:
    """Scale old ReplicaSets down, oldest first, by as many as stay above minimum
    availability (scaleDownOldReplicaSetsForRollingUpdate)."""
    min_available = replicas(d) - max_unavailable(d)
    available = total_status(all_rss, "availableReplicas")
    if available <= min_available:
        return []
    budget = available - min_available
    plan: list[tuple[Obj, int]] = []
    done = 0
    for rs in sorted(old_rss, key=by_creation):
        if done >= budget:
            break
        if replicas(rs) == 0:
            continue
        count = min(replicas(rs), budget - done)
        plan.append((rs, replicas(rs) - count))
        done += count
    return plan


def with_replicas(rs: Obj, count: int) -> Obj:
    """A copy of `rs` with spec.replicas = count (what a plan step leaves behind)."""
    return {**rs, "spec": {**(rs.get("spec") or {}), "replicas": count}}


def cleanup_candidates(d: Obj, old_rss: Sequence[Obj]) -> list[Obj]:
    """Old ReplicaSets beyond revisionHistoryLimit that may be deleted: lowest revisions
    first, only those fully scaled down and observed (cleanupDeployment)."""
    if not has_revision_history_limit(d):
        return []
    alive = [rs for rs in old_rss if not rs["metadata"].get("deletionTimestamp")]
    diff = len(alive) - int(d["spec"]["revisionHistoryLimit"])
    if diff <= 0:
        return []
    doomed = []
    for rs in sorted(alive, key=by_revision)[:diff]:
        if (status_count(rs, "replicas") != 0 or replicas(rs) != 0
                or int(rs["metadata"].get("generation") or 0) > status_count(rs, "observedGeneration")):
            continue
        doomed.append(rs)
    return doomed


def old_pods_running(new_rs: Obj | None, old_rss: Sequence[Obj],
                     pods_by_rs: dict[str, list[Obj]]) -> bool:
    """Does any old pod still run? (oldPodsRunning: Recreate waits for none.)"""
    if total_status(old_rss, "replicas") > 0:
        return True
    new_uid = (new_rs or {}).get("metadata", {}).get("uid")
    for uid, pods in pods_by_rs.items():
        if new_rs is not None and uid == new_uid:
            continue
        for pod in pods:
            if (pod.get("status") or {}).get("phase") not in ("Failed", "Succeeded"):
                return True
    return False


def selects(d: Obj, labels: dict[str, str] | None) -> bool:
    """The Deployment's (non-empty) selector matches `labels`."""
    try:
        selector = label_selector((d.get("spec") or {}).get("selector"))
    except StatusError:
        return False
    return not selector.empty() and selector.matches(labels)
