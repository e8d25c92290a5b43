"""What every workload controller shares: expectations, pod creation and deletion, pod
ranking, and claiming (adopting and releasing) the objects a selector picks.

Kubernetes piece: pkg/controller/controller_utils.go (ControllerExpectations and its
UID-tracking variant, RealPodControl, IsPodActive, ActivePodsWithRanks, FilterActivePods,
ReplicaSetsByCreationTimestamp; its ComputeHash is in deployment_util) and
controller_ref_manager.go (BaseControllerRefManager.ClaimObject, PodControllerRefManager,
ReplicaSetControllerRefManager, RecheckDeletionTimestamp), plus podutil.IsPodAvailable.

Why expectations: a controller reads pods from an informer that lags the API server. Right
after creating 3 pods, a second sync would still see 0 and create 3 more. So before writing,
the controller records "I expect 3 creations"; the informer's handlers count them off, and the
controller does not manage replicas again until they are all observed (or 5 minutes pass, in
case a watch event was lost). Deletions are tracked by pod key, because a graceful deletion
is seen twice (deletionTimestamp set, then gone) and must be counted once.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
import structlog

from ..api import meta
from ..api.errors import StatusError
from ..api.labels import NOTHING, LabelSelector, selector_from_label_selector
from ..client import Client
from ..client.cache import NAMESPACE_INDEX, Informer, meta_namespace_index
from ..client.errors import is_not_found
from ..client.record import EventRecorder
from ..client.resources import PODS, Resource
from .conditions import get_condition, is_pod_ready
from .sync_cpu import metered

Obj = dict[str, Any]
log = structlog.get_logger(component="controller-manager")

#: how long expectations are trusted before a sync goes ahead anyway (ExpectationsTimeout)
EXPECTATIONS_TIMEOUT = 300.0
#: most pods created or deleted by one sync (BurstReplicas in the RS controller)
BURST_REPLICAS = 500
#: first batch of slowStartBatch (SlowStartInitialBatchSize)
SLOW_START_INITIAL_BATCH_SIZE = 1

# event reasons (controller_utils.go)
FAILED_CREATE_POD_REASON = "FailedCreate"
SUCCESSFUL_CREATE_POD_REASON = "SuccessfulCreate"
FAILED_DELETE_POD_REASON = "FailedDelete"
SUCCESSFUL_DELETE_POD_REASON = "SuccessfulDelete"


# ---------------------------------------------------------------------------------------------
# Expectations


@dataclass
class _Expectee:
    add: int
    delete: int
    timestamp: float
    deleting: set[str] = field(default_factory=set)

    def fulfilled(self) -> bool:
        return self.add <= 0 and self.delete <= 0


class ControllerExpectations:
    """Creations and deletions each controller key still waits to observe (upstream
    UIDTrackingControllerExpectations: deletions are remembered by pod key)."""

    def __init__(self, ttl: float = EXPECTATIONS_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._items: dict[str, _Expectee] = {}

    def get(self, key: str) -> tuple[int, int] | None:
        exp = self._items.get(key)
        return None if exp is None else (exp.add, exp.delete)

    def satisfied(self, key: str) -> bool:
        """May the controller manage replicas for `key` now? Yes when nothing is expected
        (or never was), or when the expectations are older than the TTL."""
        exp = self._items.get(key)
        if exp is None or exp.fulfilled():
            return True
        if self.clock() - exp.timestamp > self.ttl:
            log.info("expectations expired", key=key, add=exp.add, delete=exp.delete)
            return True
        return False

    def expect_creations(self, key: str, count: int) -> None:
        self._items[key] = _Expectee(count, 0, self.clock())

    def expect_deletions(self, key: str, pod_keys: Iterable[str]) -> None:
        keys = set(pod_keys)
        self._items[key] = _Expectee(0, len(keys), self.clock(), keys)

    def expect(self, key: str, count: int, pod_keys: Iterable[str]) -> None:
        """SetExpectations: creations and deletions at once (the DaemonSet controller's
        syncNodes does both in one pass)."""
        keys = set(pod_keys)
        self._items[key] = _Expectee(count, len(keys), self.clock(), keys)

    def creation_observed(self, key: str) -> None:
        exp = self._items.get(key)
        if exp is not None:
            exp.add -= 1

    def deletion_observed(self, key: str, pod_key: str) -> None:
        """Count a deletion once per pod: a graceful delete is seen as an update with a
        deletionTimestamp and again as a delete."""
        exp = self._items.get(key)
        if exp is not None and pod_key in exp.deleting:
            exp.deleting.discard(pod_key)
            exp.delete -= 1

    def lower(self, key: str, add: int = 0, delete: int = 0,
              pod_keys: Iterable[str] = ()) -> None:
        """Forget creations or deletions that will never be observed (the write failed)."""
        exp = self._items.get(key)
        if exp is not None:
            exp.add -= add
            exp.delete -= delete
            exp.deleting.difference_update(pod_keys)

    def delete(self, key: str) -> None:
        self._items.pop(key, None)


# ---------------------------------------------------------------------------------------------
# Pods: activity, readiness, availability, ranking


def is_namespace_active(ns: Obj | None) -> bool:
    """A namespace that exists, is Active and is not being deleted: the only kind the
    per-namespace publishers (service accounts, the root CA ConfigMap) write into."""
    return (ns is not None and (ns.get("status") or {}).get("phase") == "Active"
            and not ns["metadata"].get("deletionTimestamp"))


def is_pod_active(pod: Obj) -> bool:
    """Not Succeeded, not Failed, not being deleted (upstream IsPodActive)."""
    phase = (pod.get("status") or {}).get("phase")
    return (phase not in ("Succeeded", "Failed")
            and not (pod.get("metadata") or {}).get("deletionTimestamp"))


def filter_active_pods(pods: Iterable[Obj]) -> list[Obj]:
    return [p for p in pods if is_pod_active(p)]


def _timestamp(text: Any) -> float | None:
    if not text:
        return None
    try:
        return meta.parse_rfc3339(str(text))
    except ValueError:
        return None


def is_pod_available(pod: Obj, min_ready_seconds: int, now: float) -> bool:
    """Ready for at least `min_ready_seconds` (upstream podutil.IsPodAvailable)."""
    if not is_pod_ready(pod):
        return False
    if not min_ready_seconds:
        return True
    since = _timestamp((get_condition(pod, "Ready") or {}).get("lastTransitionTime"))
    return since is not None and since + min_ready_seconds < now


def pod_key(pod: Obj) -> str:
    md = pod.get("metadata") or {}
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def _max_restarts(pod: Obj) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or ()
    return max((int(s.get("restartCount") or 0) for s in statuses), default=0)


def _zero_first_newest_first(ts: float | None) -> tuple[int, float]:
    """upstream afterOrZero as a sort key: a zero time first, then the later time first."""
    return (0, 0.0) if ts is None else (1, -ts)


def deletion_rank(pod: Obj, colocated: int = 0) -> tuple:
    """Sort key putting the pod to delete first (upstream ActivePodsWithRanks.Less):
    unassigned < assigned; Pending < Unknown < Running; not ready < ready; more colocated
    active siblings < fewer; ready for less time < longer; more restarts < fewer; newer <
    older."""
    spec = pod.get("spec") or {}
    md = pod.get("metadata") or {}
    ready = is_pod_ready(pod)
    ready_since = (_zero_first_newest_first(
        _timestamp((get_condition(pod, "Ready") or {}).get("lastTransitionTime")))
        if ready else (0, 0.0))
    return (1 if spec.get("nodeName") else 0,
            _PHASE_ORDINAL.get((pod.get("status") or {}).get("phase") or "", 0),
            1 if ready else 0,
            -colocated,
            ready_since,
            -_max_restarts(pod),
            _zero_first_newest_first(_timestamp(md.get("creationTimestamp"))))


def pods_to_delete(pods: Sequence[Obj], related: Iterable[Obj], count: int) -> list[Obj]:
    """The `count` pods to delete first (upstream getPodsToDelete): when not all go, rank
    them, doubled-up pods (more active related pods on the same node) first."""
    if count >= len(pods):
        return list(pods)
    on_node: dict[str, int] = {}
    for pod in related:
        if is_pod_active(pod):
            node = (pod.get("spec") or {}).get("nodeName") or ""
            on_node[node] = on_node.get(node, 0) + 1
    ranked = sorted(pods, key=lambda p: deletion_rank(
        p, on_node.get((p.get("spec") or {}).get("nodeName") or "", 0)))
    return ranked[:count]


# ---------------------------------------------------------------------------------------------
# Owner references and selectors


def get_controller_of(obj: Obj) -> Obj | None:
    """The ownerReference with `controller: true`, if any (metav1.GetControllerOf)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None


def controller_ref(owner: Obj, api_version: str, kind: str) -> Obj:
    """metav1.NewControllerRef: the reference a controller puts on what it owns."""
    md = owner.get("metadata") or {}
    return {"apiVersion": api_version, "kind": kind, "name": md.get("name", ""),
            "uid": md.get("uid", ""), "controller": True, "blockOwnerDeletion": True}


@functools.lru_cache(maxsize=2048)
def _compiled_selector(spec: bytes) -> LabelSelector:
    return selector_from_label_selector(orjson.loads(spec))


def label_selector(spec: Obj | None) -> LabelSelector:
    """A metav1.LabelSelector as a selector (None selects nothing); compiled once per
    distinct selector, since every pod event tests every controller's selector."""
    if spec is None:
        return NOTHING
    return _compiled_selector(orjson.dumps(spec, option=orjson.OPT_SORT_KEYS))


def by_creation(obj: Obj) -> tuple[float, str]:
    """Sort key: oldest first, ties by name (upstream ReplicaSetsByCreationTimestamp)."""
    md = obj.get("metadata") or {}
    return (_timestamp(md.get("creationTimestamp")) or 0.0, md.get("name", ""))


def in_namespace(informer: Informer, namespace: str) -> list[Obj]:
    """The informer's objects in one namespace (a lister's `.Pods(ns).List`)."""
    return informer.indexer.by_index(NAMESPACE_INDEX, namespace)


#: pass as `indexers=` when asking the factory for an informer `in_namespace` reads
NAMESPACE_INDEXERS = {NAMESPACE_INDEX: meta_namespace_index}


def with_kind(obj: Obj, api_version: str, kind: str) -> Obj:
    """`obj` with apiVersion/kind set (list items may lack them; events need them)."""
    if obj.get("kind") == kind and obj.get("apiVersion") == api_version:
        return obj
    return {**obj, "apiVersion": api_version, "kind": kind}


# ---------------------------------------------------------------------------------------------
# Creating and deleting pods


def pod_from_template(template: Obj, owner: Obj, ref: Obj | None) -> Obj:
    """The pod a controller creates (upstream GetPodFromTemplate): template labels,
    annotations and finalizers, `generateName: <owner>-`, the controller reference, the
    template's spec."""
    tmeta = template.get("metadata") or {}
    md: Obj = {"generateName": f"{(owner.get('metadata') or {}).get('name', '')}-"}
    for key in ("labels", "annotations"):
        if tmeta.get(key):
            md[key] = dict(tmeta[key])
    if tmeta.get("finalizers"):
        md["finalizers"] = list(tmeta["finalizers"])
    if ref is not None:
        md["ownerReferences"] = [dict(ref)]
    spec = orjson.loads(orjson.dumps(template.get("spec") or {}))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


class PodControl:
    """Creates and deletes pods for a controller and says so in events (RealPodControl)."""

    def __init__(self, client: Client, recorder: EventRecorder) -> None:
        self.client = client
        self.recorder = recorder

    async def create_pod(self, namespace: str, template: Obj, owner: Obj, ref: Obj,
                         generate_name: str | None = None) -> Obj:
        """`generate_name`: instead of `<owner>-` (an Indexed Job's `<job>-<index>-`)."""
        pod = pod_from_template(template, owner, ref)
        if generate_name:
            pod["metadata"]["generateName"] = generate_name
        if not pod["metadata"].get("labels"):
            raise ValueError("unable to create pods, no labels")
        try:
            created = await self.client.create(PODS, pod, namespace)
        except StatusError as exc:
            self.recorder.event(owner, "Warning", FAILED_CREATE_POD_REASON,
                                f"Error creating: {exc.message}")
            raise
        name = created["metadata"]["name"]
        log.debug("controller created pod", owner=owner["metadata"].get("name"), pod=name)
        self.recorder.event(owner, "Normal", SUCCESSFUL_CREATE_POD_REASON, f"Created pod: {name}")
        return created

    async def delete_pod(self, namespace: str, name: str, owner: Obj) -> None:
        try:
            await self.client.delete(PODS, name, namespace)
        except StatusError as exc:
            if not is_not_found(exc):
                self.recorder.event(owner, "Warning", FAILED_DELETE_POD_REASON,
                                    f"Error deleting: {exc.message}")
            raise
        self.recorder.event(owner, "Normal", SUCCESSFUL_DELETE_POD_REASON, f"Deleted pod: {name}")


async def slow_start_batch(count: int, initial: int,
                           fn: Callable[[], Awaitable[None]]) -> tuple[int, BaseException | None]:
    """Call `fn` `count` times in batches of 1, 2, 4, ... (upstream slowStartBatch): a
    failing batch stops the rest, so a quota or admission error costs one call, not 500.
    Returns (successes, first error)."""
    remaining, successes = count, 0
    batch = min(remaining, initial)
    while batch > 0:
        results = await asyncio.gather(*(metered(fn()) for _ in range(batch)),
                                         return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        successes += batch - len(errors)
        if errors:
            return successes, errors[0]
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None


# ---------------------------------------------------------------------------------------------
# Claiming: adopt matching orphans, release owned objects that stopped matching


class ControllerRefManager:
    """Decides which of `objs` the owner controls (upstream BaseControllerRefManager +
    Pod/ReplicaSetControllerRefManager). Adoption and release are strategic-merge patches of
    ownerReferences, as upstream; adoption first re-reads the owner from the API server once
    (RecheckDeletionTimestamp), so a controller being deleted adopts nothing."""

    def __init__(self, client: Client, resource: Resource, owner: Obj, selector: LabelSelector,
                 ref: Obj, can_adopt: Callable[[], Awaitable[None]]) -> None:
        self.client = client
        self.resource = resource
        self.owner = owner
        self.selector = selector
        self.ref = ref
        self._can_adopt = can_adopt
        self._adopt_checked: asyncio.Task | None = None

    @property
    def _owner_deleting(self) -> bool:
        return bool((self.owner.get("metadata") or {}).get("deletionTimestamp"))

    async def claim(self, objs: Iterable[Obj]) -> list[Obj]:
        """The objects the owner controls after adopting and releasing; errors of single
        objects are collected and the first re-raised once all were tried."""
        claimed: list[Obj] = []
        errors: list[BaseException] = []
        uid = self.ref["uid"]
        for obj in objs:
            md = obj.get("metadata") or {}
            matches = self.selector.matches(md.get("labels"))
            ref = get_controller_of(obj)
            try:
                if ref is not None:
                    if ref.get("uid") != uid:
                        continue  # someone else's
                    if matches:
                        claimed.append(obj)
                    elif not self._owner_deleting:
                        await self._release(obj)
                    continue
                if self._owner_deleting or not matches or md.get("deletionTimestamp"):
                    continue
                await self._adopt(obj)
                claimed.append(obj)
            except StatusError as exc:
                if not is_not_found(exc):
                    errors.append(exc)
            except Exception as exc:  # noqa: BLE001 - the owner can't adopt: report it
                errors.append(exc)
        if errors:
            raise errors[0]
        return claimed

    async def _adopt(self, obj: Obj) -> None:
        if self._adopt_checked is None:
            self._adopt_checked = asyncio.ensure_future(self._can_adopt())
        await self._adopt_checked
        md = obj["metadata"]
        await self.client.patch(
            self.resource, md["name"],
            {"metadata": {"ownerReferences": [self.ref], "uid": md.get("uid")}},
            md.get("namespace"), patch_type="strategic")

    async def _release(self, obj: Obj) -> None:
        md = obj["metadata"]
        await self.client.patch(
            self.resource, md["name"],
            {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": self.ref["uid"]}],
                          "uid": md.get("uid")}},
            md.get("namespace"), patch_type="strategic")


def recheck_deletion(fetch: Callable[[], Awaitable[Obj]], owner: Obj) -> Callable[[], Awaitable[None]]:
    """A can-adopt check (upstream RecheckDeletionTimestamp): a fresh read of the owner must
    have the same uid and no deletionTimestamp."""

    async def check() -> None:
        md = owner.get("metadata") or {}
        fresh = await fetch()
        fmd = fresh.get("metadata") or {}
        if fmd.get("uid") != md.get("uid"):
            raise ValueError(f"original {md.get('namespace')}/{md.get('name')} is gone: "
                             f"got uid {fmd.get('uid')}, wanted {md.get('uid')}")
        if fmd.get("deletionTimestamp"):
            raise ValueError(f"{md.get('namespace')}/{md.get('name')} has just been deleted "
                             f"at {fmd['deletionTimestamp']}")

    return check
