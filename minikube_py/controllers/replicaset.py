"""The replica-syncing controller: keep `spec.replicas` pods running for each ReplicaSet
(and, through a thin adapter, each ReplicationController).

Kubernetes piece: pkg/controller/replicaset/replica_set.go (ReplicaSetController,
syncReplicaSet, manageReplicas, the pod event handlers) and replica_set_utils.go
(calculateStatus, updateReplicaSetStatus). v1.0's replication manager is the ancestor;
upstream later made it a wrapper around this same code (replication_controller.go builds a
`replicaset.NewBaseController` over RC adapters), which is the shape kept here: one
implementation, `ReplicaSetBase`, with the resource, component name and selector form as its
only parameters.

A sync: read the owner and the namespace's pods from the informers; claim pods (adopt
orphans that match, release owned pods that stopped matching); if the expectations are
satisfied, create or delete the difference (slow-start batches, at most 500); then write the
status through the status subresource if it changed.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..api import meta
from ..api.errors import StatusError
from ..api.labels import LabelSelector, selector_from_set
from ..client.errors import is_conflict, is_not_found
from ..client.resources import PODS, REPLICASETS, Resource
from .base import Controller, ControllerContext, split_key
from .conditions import get_condition, is_pod_ready
from .controller_utils import (
    BURST_REPLICAS,
    NAMESPACE_INDEXERS,
    SLOW_START_INITIAL_BATCH_SIZE,
    ControllerExpectations,
    ControllerRefManager,
    PodControl,
    controller_ref,
    filter_active_pods,
    get_controller_of,
    in_namespace,
    is_pod_available,
    label_selector,
    pod_key,
    pods_to_delete,
    recheck_deletion,
    slow_start_batch,
    with_kind,
)
from .sync_cpu import metered

Obj = dict[str, Any]

REPLICA_FAILURE = "ReplicaFailure"
STATUS_COUNTS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")


def spec_replicas(obj: Obj) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def calculate_status(owner: Obj, pods: list[Obj], manage_error: BaseException | None,
                     diff: int, now: float) -> Obj:
    """The owner's next status (upstream calculateStatus): counts of the claimed active
    pods, and a ReplicaFailure condition while creating or deleting fails. `diff` is
    `len(pods) - replicas` at the time of the failure (its sign picks the reason)."""
    spec = owner.get("spec") or {}
    status = dict(owner.get("status") or {})
    template_selector = selector_from_set(
        ((spec.get("template") or {}).get("metadata") or {}).get("labels"))
    min_ready = int(spec.get("minReadySeconds") or 0)
    fully_labeled = ready = available = 0
    for pod in pods:
        if template_selector.matches((pod.get("metadata") or {}).get("labels")):
            fully_labeled += 1
        if is_pod_ready(pod):
            ready += 1
            if is_pod_available(pod, min_ready, now):
                available += 1
    conditions = [dict(c) for c in status.get("conditions") or ()]
    failure = get_condition(owner, REPLICA_FAILURE)
    if manage_error is not None and failure is None:
        reason = "FailedCreate" if diff < 0 else "FailedDelete"
        message = getattr(manage_error, "message", None) or str(manage_error)
        conditions.append({"type": REPLICA_FAILURE, "status": "True",
                           "lastTransitionTime": meta.rfc3339(now), "reason": reason,
                           "message": message})
    elif manage_error is None and failure is not None:
        conditions = [c for c in conditions if c.get("type") != REPLICA_FAILURE]
    status.update(replicas=len(pods), fullyLabeledReplicas=fully_labeled, readyReplicas=ready,
                  availableReplicas=available)
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)
    return status


def status_unchanged(owner: Obj, status: Obj) -> bool:
    """True when writing `status` would change nothing (counts, conditions, and the
    generation already observed), as updateReplicaSetStatus checks before writing."""
    old = owner.get("status") or {}
    generation = (owner.get("metadata") or {}).get("generation")
    return (all(int(old.get(k) or 0) == int(status.get(k) or 0) for k in STATUS_COUNTS)
            and old.get("observedGeneration") == generation
            and (old.get("conditions") or []) == (status.get("conditions") or []))


class ReplicaSetBase(Controller):
    """Parameterised by `resource`, `component` and `selector_of`; everything else is
    shared by ReplicaSets and ReplicationControllers."""

    resource: Resource = REPLICASETS
    component = "replicaset-controller"

    def __init__(self, ctx: ControllerContext, workers: int) -> None:
        super().__init__(ctx)
        self.workers = workers
        self.kind = self.resource.kind
        self.api_version = self.resource.api_version
        self.burst_replicas = BURST_REPLICAS
        self.expectations = ControllerExpectations()
        self.recorder = ctx.recorder(self.component)
        self.pod_control = PodControl(self.client, self.recorder)
        self.owners = ctx.informers.informer(self.resource, indexers=NAMESPACE_INDEXERS)
        self.pods = ctx.informers.informer(PODS, indexers=NAMESPACE_INDEXERS)
        self.owners.add_event_handler(self._owner_changed, self._owner_updated, self._owner_deleted)
        self.pods.add_event_handler(self._pod_added, self._pod_updated, self._pod_deleted)

    # -- the adapter's parameter --------------------------------------------------------
    def selector_of(self, owner: Obj) -> LabelSelector:
        """The owner's selector; a ReplicaSet's is a metav1.LabelSelector."""
        return label_selector((owner.get("spec") or {}).get("selector"))

    # -- keys and lookups ---------------------------------------------------------------
    @staticmethod
    def key_of(obj: Obj) -> str:
        md = obj.get("metadata") or {}
        return f"{md.get('namespace', '')}/{md.get('name', '')}"

    def enqueue(self, owner: Obj, after: float = 0.0) -> None:
        key = self.key_of(owner)
        if after > 0:
            self.queue.add_after(key, after)
        else:
            self.queue.add(key)

    def resolve_controller_ref(self, namespace: str, ref: Obj) -> Obj | None:
        """The owner a pod's controller reference names, if it is ours and still the same
        object (same uid)."""
        if ref.get("kind") != self.kind:
            return None
        owner = self.owners.indexer.get(f"{namespace}/{ref.get('name', '')}")
        if owner is None or (owner.get("metadata") or {}).get("uid") != ref.get("uid"):
            return None
        return owner

    def owners_selecting(self, pod: Obj) -> list[Obj]:
        """Owners in the pod's namespace whose (non-empty) selector matches it (upstream
        GetPodReplicaSets) — candidates to adopt an orphan."""
        md = pod.get("metadata") or {}
        found = []
        for owner in in_namespace(self.owners, md.get("namespace", "")):
            selector = self._selector_or_none(owner)
            if selector is not None and not selector.empty() and selector.matches(md.get("labels")):
                found.append(owner)
        return found

    def _selector_or_none(self, owner: Obj) -> LabelSelector | None:
        try:
            return self.selector_of(owner)
        except StatusError:
            return None

    # -- owner events -------------------------------------------------------------------
    def _owner_changed(self, owner: Obj) -> None:
        self.enqueue(owner)

    def _owner_updated(self, old: Obj, cur: Obj) -> None:
        self.enqueue(cur)

    def _owner_deleted(self, owner: Obj) -> None:
        self.expectations.delete(self.key_of(owner))
        self.enqueue(owner)

    # -- pod events (upstream addPod / updatePod / deletePod) ---------------------------
    def _pod_added(self, pod: Obj) -> None:
        md = pod.get("metadata") or {}
        if md.get("deletionTimestamp"):
            self._pod_deleted(pod)  # created already terminating (after a restart)
            return
        ref = get_controller_of(pod)
        if ref is not None:
            owner = self.resolve_controller_ref(md.get("namespace", ""), ref)
            if owner is not None:
                self.expectations.creation_observed(self.key_of(owner))
                self.enqueue(owner)
            return
        for owner in self.owners_selecting(pod):  # an orphan: whoever may adopt it syncs
            self.enqueue(owner)

    def _pod_updated(self, old: Obj, cur: Obj) -> None:
        old_md, cur_md = old.get("metadata") or {}, cur.get("metadata") or {}
        labels_changed = old_md.get("labels") != cur_md.get("labels")
        if cur_md.get("deletionTimestamp"):
            # a graceful delete: the pod is on its way out, count it as deleted now
            self._pod_deleted(cur)
            if labels_changed:
                self._pod_deleted(old)
            return
        cur_ref, old_ref = get_controller_of(cur), get_controller_of(old)
        namespace = cur_md.get("namespace", "")
        ref_changed = (cur_ref or {}).get("uid") != (old_ref or {}).get("uid")
        if ref_changed and old_ref is not None:
            owner = self.resolve_controller_ref(namespace, old_ref)
            if owner is not None:
                self.enqueue(owner)
        if cur_ref is not None:
            owner = self.resolve_controller_ref(namespace, cur_ref)
            if owner is None:
                return
            self.enqueue(owner)
            min_ready = int((owner.get("spec") or {}).get("minReadySeconds") or 0)
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(cur):
                # check again once it has been ready long enough to count as available
                self.enqueue(owner, after=min_ready + 1)
            return
        if labels_changed or ref_changed:
            for owner in self.owners_selecting(cur):
                self.enqueue(owner)

    def _pod_deleted(self, pod: Obj) -> None:
        ref = get_controller_of(pod)
        if ref is None:
            return
        owner = self.resolve_controller_ref((pod.get("metadata") or {}).get("namespace", ""), ref)
        if owner is None:
            return
        key = self.key_of(owner)
        self.expectations.deletion_observed(key, pod_key(pod))
        self.enqueue(owner)

    # -- sync ---------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        owner = self.owners.indexer.get(key)
        if owner is None:
            self.expectations.delete(key)
            return
        owner = with_kind(owner, self.api_version, self.kind)
        needs_sync = self.expectations.satisfied(key)
        try:
            selector = self.selector_of(owner)
        except StatusError as exc:  # invalid selector: nothing to do until it is fixed
            self.log.warning("invalid selector", key=key, error=exc.message)
            return
        pods = filter_active_pods(in_namespace(self.pods, namespace))
        pods = await self.claim_pods(owner, selector, pods)
        manage_error: BaseException | None = None
        diff = len(pods) - spec_replicas(owner)
        if needs_sync and not owner["metadata"].get("deletionTimestamp"):
            manage_error = await self.manage_replicas(pods, owner, key)
        status = calculate_status(owner, pods, manage_error, diff, time.time())
        updated = await self.update_status(owner, status)
        spec = updated.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        ustatus = updated.get("status") or {}
        replicas = spec_replicas(updated)
        if (manage_error is None and min_ready > 0
                and ustatus.get("readyReplicas") == replicas
                and ustatus.get("availableReplicas") != replicas):
            self.queue.add_after(key, min_ready)
        if manage_error is not None:
            raise manage_error

    async def claim_pods(self, owner: Obj, selector: LabelSelector, pods: list[Obj]) -> list[Obj]:
        md = owner["metadata"]

        async def fetch() -> Obj:
            return await self.client.get(self.resource, md["name"], md["namespace"])

        manager = ControllerRefManager(
            self.client, PODS, owner, selector,
            controller_ref(owner, self.api_version, self.kind), recheck_deletion(fetch, owner))
        return await manager.claim(pods)

    async def manage_replicas(self, pods: list[Obj], owner: Obj, key: str) -> BaseException | None:
        """Create or delete the difference; returns the first error (after recording what
        will never be observed)."""
        md = owner["metadata"]
        namespace = md["namespace"]
        diff = len(pods) - spec_replicas(owner)
        if diff < 0:
            count = min(-diff, self.burst_replicas)
            self.expectations.expect_creations(key, count)
            template = (owner.get("spec") or {}).get("template") or {}
            ref = controller_ref(owner, self.api_version, self.kind)
            self.log.debug("too few replicas", key=key, need=spec_replicas(owner),
                          creating=count)

            async def create() -> None:
                await self.pod_control.create_pod(namespace, template, owner, ref)

            successes, error = await slow_start_batch(count, SLOW_START_INITIAL_BATCH_SIZE, create)
            skipped = count - successes
            if skipped > 0:
                # the failed creations and the batches never tried will not be observed
                self.expectations.lower(key, add=skipped)
            return error
        if diff > 0:
            count = min(diff, self.burst_replicas)
            doomed = pods_to_delete(pods, self.related_pods(owner), count)
            keys = [pod_key(p) for p in doomed]
            self.expectations.expect_deletions(key, keys)
            self.log.debug("too many replicas", key=key, need=spec_replicas(owner),
                          deleting=count)

            async def delete(pod: Obj) -> None:
                pmd = pod["metadata"]
                try:
                    await self.pod_control.delete_pod(namespace, pmd["name"], owner)
                except BaseException:
                    self.expectations.lower(key, delete=1, pod_keys=[pod_key(pod)])
                    raise

            results = await asyncio.gather(*(metered(delete(p)) for p in doomed),
                                             return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException) and not is_not_found(result):
                    return result
        return None

    def related_pods(self, owner: Obj) -> list[Obj]:
        """Pods of every owner controlled by the same controller (upstream
        getIndirectlyRelatedPods: a Deployment's ReplicaSets), for the colocation rank."""
        ref = get_controller_of(owner)
        if ref is None:
            return []
        namespace = owner["metadata"]["namespace"]
        seen: set[str] = set()
        related: list[Obj] = []
        pods = in_namespace(self.pods, namespace)
        for sibling in in_namespace(self.owners, namespace):
            sibling_ref = get_controller_of(sibling)
            if sibling_ref is None or sibling_ref.get("uid") != ref.get("uid"):
                continue
            selector = self._selector_or_none(sibling)
            if selector is None:
                continue
            for pod in pods:
                uid = pod["metadata"].get("uid", "")
                if uid not in seen and selector.matches(pod["metadata"].get("labels")):
                    seen.add(uid)
                    related.append(pod)
        return related

    async def update_status(self, owner: Obj, status: Obj) -> Obj:
        """Write `status` (with observedGeneration) if anything changed; one retry on a
        conflict with a fresh read, as upstream's statusUpdateRetries = 1."""
        if status_unchanged(owner, status):
            return owner
        md = owner["metadata"]
        current = owner
        for attempt in range(2):
            body = {**current, "status": {**status,
                                          "observedGeneration": current["metadata"].get("generation")}}
            try:
                return await self.client.update_status(self.resource, body)
            except StatusError as exc:
                if attempt == 1 or not is_conflict(exc):
                    raise
                current = await self.client.get(self.resource, md["name"], md["namespace"])
        raise AssertionError("unreachable")


class ReplicaSetController(ReplicaSetBase):
    """apps/v1 ReplicaSets (kube-controller-manager's `replicaset` controller)."""

    name = "replicaset"
    service_account = "replicaset-controller"
    resource = REPLICASETS
    component = "replicaset-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx, ctx.options.concurrent_replicaset_syncs)
