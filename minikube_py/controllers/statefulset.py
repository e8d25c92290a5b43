"""The StatefulSet controller: named pods with stable identities and storage, in order.

Kubernetes piece: pkg/controller/statefulset — stateful_set.go (StatefulSetController, its pod
and set handlers, sync), stateful_set_control.go (defaultStatefulSetControl:
performUpdate, getStatefulSetRevisions, updateStatefulSet's create/wait/condemn/rolling-update
pass, truncateHistory, updateStatefulSetStatus) and stateful_pod_control.go
(CreateStatefulPod: claims first, then the pod; DeleteStatefulPod; the claim owner references
of persistentVolumeClaimRetentionPolicy). The pure parts are in statefulset_util.py; revisions
in history.py.

One pass of `_update` does at most one thing under OrderedReady: create the lowest missing
ordinal, or wait for it to become Running and Ready (and available for minReadySeconds), or
delete the highest condemned ordinal, or replace the highest pod of an old revision at or
above the partition. Parallel creates and deletes every missing or condemned pod at once; the
rolling update is always one pod at a time. It runs as `system:serviceaccount:kube-system:
statefulset-controller`, whose role writes `statefulsets/status` by update only.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..api.errors import StatusError
from ..api.labels import LabelSelector
from ..client.errors import is_already_exists, is_conflict, is_not_found
from ..client.resources import (
    CONTROLLER_REVISIONS,
    PERSISTENT_VOLUME_CLAIMS,
    PODS,
    STATEFULSETS,
)
from . import statefulset_util as util
from .base import Controller, ControllerContext, split_key
from .controller_utils import (
    NAMESPACE_INDEXERS,
    ControllerRefManager,
    controller_ref,
    get_controller_of,
    in_namespace,
    label_selector,
    recheck_deletion,
    with_kind,
)
from .history import (
    RevisionControl,
    find_equal_revisions,
    new_revision,
    next_revision,
    revision_number,
    sort_revisions,
    template_patch,
)

Obj = dict[str, Any]


class StatefulSetController(Controller):
    """kube-controller-manager's `statefulset` controller."""

    name = "statefulset"
    service_account = "statefulset-controller"
    component = "statefulset-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_statefulset_syncs
        self.recorder = ctx.recorder(self.component)
        self.revision_control = RevisionControl(self.client)
        self.sets = ctx.informers.informer(STATEFULSETS, indexers=NAMESPACE_INDEXERS)
        self.pods = ctx.informers.informer(PODS, indexers=NAMESPACE_INDEXERS)
        self.claims = ctx.informers.informer(PERSISTENT_VOLUME_CLAIMS, indexers=NAMESPACE_INDEXERS)
        self.revisions = ctx.informers.informer(CONTROLLER_REVISIONS, indexers=NAMESPACE_INDEXERS)
        self.sets.add_event_handler(self._enqueue, lambda _o, c: self._enqueue(c), self._enqueue)
        self.pods.add_event_handler(self._pod_changed, self._pod_updated, self._pod_changed)
        self.revisions.add_event_handler(self._owned_changed, lambda _o, c: self._owned_changed(c),
                                         self._owned_changed)

    # -- events ---------------------------------------------------------------------------
    @staticmethod
    def key_of(obj: Obj) -> str:
        md = obj.get("metadata") or {}
        return f"{md.get('namespace', '')}/{md.get('name', '')}"

    def _enqueue(self, sts: Obj, after: float = 0.0) -> None:
        if after > 0:
            self.queue.add_after(self.key_of(sts), after)
        else:
            self.queue.add(self.key_of(sts))

    def _owner(self, obj: Obj) -> Obj | None:
        ref = get_controller_of(obj)
        if ref is None or ref.get("kind") != util.KIND:
            return None
        namespace = (obj.get("metadata") or {}).get("namespace", "")
        sts = self.sets.indexer.get(f"{namespace}/{ref.get('name', '')}")
        if sts is None or (sts.get("metadata") or {}).get("uid") != ref.get("uid"):
            return None
        return sts

    def _owned_changed(self, obj: Obj) -> None:
        sts = self._owner(obj)
        if sts is not None:
            self._enqueue(sts)
        elif get_controller_of(obj) is None:
            md = obj.get("metadata") or {}
            for candidate in in_namespace(self.sets, md.get("namespace", "")):
                selector = _selector(candidate)
                if selector is not None and not selector.empty() and selector.matches(
                        md.get("labels")):
                    self._enqueue(candidate)

    def _pod_changed(self, pod: Obj) -> None:
        self._owned_changed(pod)

    def _pod_updated(self, old: Obj, cur: Obj) -> None:
        old_sts = self._owner(old)
        if old_sts is not None and old_sts is not self._owner(cur):
            self._enqueue(old_sts)
        self._owned_changed(cur)
        sts = self._owner(cur)
        min_ready = int(((sts or {}).get("spec") or {}).get("minReadySeconds") or 0)
        if sts is not None and min_ready > 0 and not util.is_pod_ready(old) \
                and util.is_pod_ready(cur):
            self._enqueue(sts, after=min_ready + 1)

    # -- sync -----------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        namespace, _ = split_key(key)
        sts = self.sets.indexer.get(key)
        if sts is None:
            return
        sts = with_kind(sts, util.API_VERSION, util.KIND)
        selector = _selector(sts)
        if selector is None or selector.empty():
            return  # upstream: an empty selector would select every pod
        pods = await self._claim(sts, selector, PODS, [
            p for p in in_namespace(self.pods, namespace) if util.is_member_of(sts, p)])
        revisions = await self._claim(sts, selector, CONTROLLER_REVISIONS,
                                      in_namespace(self.revisions, namespace))
        current, update, collisions = await self._revisions(sts, revisions)
        status, error = await self._update(sts, pods, current, update, collisions)
        await self._update_status(sts, status)
        await self._truncate_history(sts, pods, revisions, current, update)
        min_ready = int((sts.get("spec") or {}).get("minReadySeconds") or 0)
        if min_ready > 0 and status["availableReplicas"] != status["readyReplicas"]:
            self._enqueue(sts, after=min_ready)
        if error is not None:
            raise error

    async def _claim(self, sts: Obj, selector: LabelSelector, resource: Any,
                     objs: list[Obj]) -> list[Obj]:
        md = sts["metadata"]

        async def fetch() -> Obj:
            return await self.client.get(STATEFULSETS, md["name"], md["namespace"])

        manager = ControllerRefManager(self.client, resource, sts, selector,
                                       controller_ref(sts, util.API_VERSION, util.KIND),
                                       recheck_deletion(fetch, sts))
        return await manager.claim(objs)

    # -- revisions ------------------------------------------------------------------------
    async def _revisions(self, sts: Obj, revisions: list[Obj]) -> tuple[Obj, Obj, int]:
        """getStatefulSetRevisions: (current, update, collision count)."""
        revisions = sort_revisions(revisions)
        collisions = int((sts.get("status") or {}).get("collisionCount") or 0)
        template_labels = ((sts["spec"].get("template") or {}).get("metadata") or {}).get("labels")
        candidate = new_revision(sts, controller_ref(sts, util.API_VERSION, util.KIND),
                                 template_labels, template_patch(sts), next_revision(revisions),
                                 collisions)
        if sts["metadata"].get("annotations"):
            candidate["metadata"]["annotations"] = dict(sts["metadata"]["annotations"])
        equal = find_equal_revisions(revisions, candidate)
        if equal and equal[-1] is revisions[-1]:
            update = equal[-1]
        elif equal:
            update = await self.revision_control.set_revision(equal[-1],
                                                              revision_number(candidate))
        else:
            update, collisions = await self.revision_control.create(candidate, collisions)
        current_name = (sts.get("status") or {}).get("currentRevision")
        current = next((r for r in revisions if r["metadata"]["name"] == current_name), update)
        return current, update, collisions

    async def _truncate_history(self, sts: Obj, pods: list[Obj], revisions: list[Obj],
                                current: Obj, update: Obj) -> None:
        """truncateHistory: keep revisionHistoryLimit revisions besides the live ones."""
        live = {util.revision_of(p) for p in pods}
        live |= {current["metadata"]["name"], update["metadata"]["name"]}
        history = [r for r in sort_revisions(revisions) if r["metadata"]["name"] not in live]
        limit = (sts.get("spec") or {}).get("revisionHistoryLimit")
        excess = len(history) - (10 if limit is None else int(limit))
        for revision in history[:max(0, excess)]:
            try:
                await self.revision_control.delete(revision)
            except StatusError as exc:
                if not is_not_found(exc):
                    raise

    # -- the update pass ----------------------------------------------------------------------
    async def _update(self, sts: Obj, pods: list[Obj], current: Obj, update: Obj,
                      collisions: int) -> tuple[Obj, BaseException | None]:
        """updateStatefulSet: one pass; returns the status to write and the first error."""
        now = time.time()
        min_ready = int((sts.get("spec") or {}).get("minReadySeconds") or 0)
        current_set, update_set = util.apply_revision(sts, current), util.apply_revision(sts, update)
        current_name, update_name = current["metadata"]["name"], update["metadata"]["name"]
        status = {"observedGeneration": sts["metadata"].get("generation"),
                  "currentRevision": current_name, "updateRevision": update_name,
                  "collisionCount": collisions,
                  **util.replica_status(pods, current_name, update_name, min_ready, now)}
        util.complete_rolling_update(sts, status)
        if sts["metadata"].get("deletionTimestamp"):
            return status, None
        try:
            await self._one_pass(sts, pods, current_set, update_set, current_name, update_name,
                                 min_ready, now)
        except StatusError as exc:
            return status, exc
        return status, None

    async def _one_pass(self, sts: Obj, pods: list[Obj], current_set: Obj, update_set: Obj,
                        current_name: str, update_name: str, min_ready: int,
                        now: float) -> None:
        start, count = util.start_ordinal(sts), util.replicas_of(sts)
        replicas: list[Obj | None] = [None] * count
        condemned: list[Obj] = []
        for pod in pods:
            ordinal = util.ordinal_of(pod)
            if start <= ordinal < start + count:
                replicas[ordinal - start] = pod
            elif ordinal >= 0:
                condemned.append(pod)
        for i in range(count):
            if replicas[i] is None:
                replicas[i] = util.versioned_pod(current_set, update_set, current_name,
                                                 update_name, start + i)
        condemned.sort(key=util.ordinal_of, reverse=True)
        monotonic = (sts.get("spec") or {}).get("podManagementPolicy") != "Parallel"
        first_unhealthy = next((p for p in [*replicas, *condemned]
                                if p is not None and not util.is_healthy(p, min_ready, now)),
                               None)
        for i, pod in enumerate(replicas):
            assert pod is not None
            if util.is_failed(pod) or util.is_succeeded(pod):
                await self._delete_pod(sts, pod)
                if monotonic:
                    return
                continue
            if not util.is_created(pod):
                await self._create_pod(sts, pod, start + i)
                if monotonic:
                    return
                continue
            if util.is_terminating(pod) or not util.is_running_and_ready(pod) \
                    or not util.is_running_and_available(pod, min_ready, now):
                if monotonic:
                    self.log.debug("waiting for pod to be running and ready",
                                   statefulset=sts["metadata"]["name"],
                                   pod=pod["metadata"]["name"])
                    return
                continue
            await self._enforce_identity(sts, pod, start + i)
        for pod in condemned:
            if util.is_terminating(pod):
                if monotonic:
                    return
                continue
            if monotonic and not util.is_running_and_ready(pod) and pod is not first_unhealthy:
                return
            await self._sync_claims(sts, pod, util.ordinal_of(pod))
            await self._delete_pod(sts, pod)
            if monotonic:
                return
        strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type") == "OnDelete":
            return
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        for target in range(count - 1, partition - 1, -1):
            pod = replicas[target]
            if pod is None or not util.is_created(pod):
                return
            if util.revision_of(pod) != update_name and not util.is_terminating(pod):
                await self._delete_pod(sts, pod)
                return
            if not util.is_healthy(pod, min_ready, now):
                return

    # -- pods and claims ------------------------------------------------------------------
    async def _create_pod(self, sts: Obj, pod: Obj, ordinal: int) -> None:
        """CreateStatefulPod: the claims first (so the pod can bind them), then the pod."""
        namespace = sts["metadata"]["namespace"]
        await self._create_claims(sts, pod, [
            c for c in util.claims_for(sts, ordinal).values()
            if self.claims.indexer.get(f"{namespace}/{c['metadata']['name']}") is None], ordinal)
        verb = f"create Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']}"
        try:
            await self.client.create(PODS, pod, namespace)
        except StatusError as exc:
            if is_already_exists(exc):
                return
            self._event(sts, "Warning", "FailedCreate", f"{verb} failed error: {exc.message}")
            raise
        self._event(sts, "Normal", "SuccessfulCreate", f"{verb} successful")

    async def _create_claims(self, sts: Obj, pod: Obj, claims: list[Obj], ordinal: int) -> None:
        """createPersistentVolumeClaims: the claims the ordinal's pod mounts, with the owner
        references of the retention policy."""
        namespace = sts["metadata"]["namespace"]
        for claim in claims:
            name = claim["metadata"]["name"]
            owners = util.wanted_claim_owners(sts, None, ordinal)
            if owners:
                claim["metadata"]["ownerReferences"] = owners
            try:
                await self.client.create(PERSISTENT_VOLUME_CLAIMS, claim, namespace)
            except StatusError as exc:
                if not is_already_exists(exc):
                    self._event(sts, "Warning", "FailedCreate",
                                f"create Claim {name} for Pod {pod['metadata']['name']} in "
                                f"StatefulSet {sts['metadata']['name']} failed error: "
                                f"{exc.message}")
                    raise
            else:
                self._event(sts, "Normal", "SuccessfulCreate",
                            f"create Claim {name} Pod {pod['metadata']['name']} in "
                            f"StatefulSet {sts['metadata']['name']} success")

    async def _delete_pod(self, sts: Obj, pod: Obj) -> None:
        verb = f"delete Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']}"
        try:
            await self.client.delete(PODS, pod["metadata"]["name"], sts["metadata"]["namespace"])
        except StatusError as exc:
            if is_not_found(exc):
                return
            self._event(sts, "Warning", "FailedDelete", f"{verb} failed error: {exc.message}")
            raise
        self._event(sts, "Normal", "SuccessfulDelete", f"{verb} successful")

    async def _enforce_identity(self, sts: Obj, pod: Obj, ordinal: int) -> None:
        """The invariants of a healthy pod (UpdateStatefulPod): its identity labels, its
        claims present (recreated if someone deleted one) and owned per the policy."""
        labels = util.identity_label_patch(sts, pod)
        if labels is not None:
            await self.client.patch(PODS, pod["metadata"]["name"],
                                    {"metadata": {"labels": labels}},
                                    sts["metadata"]["namespace"])
        namespace = sts["metadata"]["namespace"]
        missing = [c for c in util.claims_for(sts, ordinal).values()
                   if self.claims.indexer.get(f"{namespace}/{c['metadata']['name']}") is None]
        if missing:
            await self._create_claims(sts, pod, missing, ordinal)
        await self._sync_claims(sts, pod, ordinal)

    async def _sync_claims(self, sts: Obj, pod: Obj, ordinal: int) -> None:
        """updateClaimOwnerRefForSetAndPod: the retention policy as owner references on each
        existing claim of the ordinal (the garbage collector does the deleting)."""
        namespace = sts["metadata"]["namespace"]
        managed = {sts["metadata"].get("uid", ""), (pod.get("metadata") or {}).get("uid", "")}
        wanted = util.wanted_claim_owners(sts, pod, ordinal)
        for claim in util.claims_for(sts, ordinal).values():
            existing = self.claims.indexer.get(f"{namespace}/{claim['metadata']['name']}")
            if existing is None:
                continue
            refs = util.claim_owner_patch(existing, wanted, managed)
            if refs is None:
                continue
            body = {**existing, "metadata": {**existing["metadata"], "ownerReferences": refs}}
            try:
                await self.client.update(PERSISTENT_VOLUME_CLAIMS, body)
            except StatusError as exc:
                if not (is_conflict(exc) or is_not_found(exc)):
                    raise

    def _event(self, sts: Obj, type_: str, reason: str, message: str) -> None:
        self.recorder.event(sts, type_, reason, message)

    # -- status -----------------------------------------------------------------------------
    async def _update_status(self, sts: Obj, status: Obj) -> None:
        """updateStatefulSetStatus: PUT /status when anything moved; one retry on conflict."""
        current = sts
        for attempt in range(2):
            old = current.get("status") or {}
            merged = {**old, **status}
            if merged == old:
                return
            try:
                await self.client.update_status(STATEFULSETS, {**current, "status": merged})
                return
            except StatusError as exc:
                if attempt == 1 or not is_conflict(exc):
                    raise
                md = sts["metadata"]
                current = await self.client.get(STATEFULSETS, md["name"], md["namespace"])
                await asyncio.sleep(0)


def _selector(sts: Obj) -> LabelSelector | None:
    try:
        return label_selector((sts.get("spec") or {}).get("selector"))
    except StatusError:
        return None
