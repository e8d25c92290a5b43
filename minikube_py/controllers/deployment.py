"""The deployment controller: roll a Deployment's pods from one template to the next
through ReplicaSets, and report the rollout in the Deployment's status.

Kubernetes piece: pkg/controller/deployment (deployment_controller.go: the handlers and
syncDeployment; sync.go: getNewReplicaSet, scale, cleanupDeployment, syncDeploymentStatus;
rolling.go: rolloutRolling, reconcileNewReplicaSet, reconcileOldReplicaSets; recreate.go:
rolloutRecreate; progress.go: syncRolloutStatus, requeueStuckDeployment). What to do is decided
by the pure functions of deployment_util; this module reads the informers' caches and writes.

Each template gets a ReplicaSet `<deployment>-<pod-template-hash>` whose selector, labels and
pod labels carry the hash, so ReplicaSets of one Deployment never fight over pods. The
ReplicaSets carry `deployment.kubernetes.io/revision` (what `kubectl rollout history/undo`
read) and desired/max replicas (what proportional scaling reads). The controller never
touches pods; the ReplicaSet controller does.
The Deployment's own revision annotation is written with its status (a status write may
change annotations, as upstream's apps status strategy allows), so the controller needs no
more than its bootstrap role, `system:controller:deployment-controller`, grants.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from ..api.errors import StatusError
from ..client.errors import is_not_found
from ..client.resources import DEPLOYMENTS, PODS, REPLICASETS
from . import deployment_status as ds
from . import deployment_util as du
from .base import Controller, ControllerContext
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

Obj = dict[str, Any]


class DeploymentController(Controller):
    name = "deployment"
    service_account = "deployment-controller"
    component = "deployment-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_deployment_syncs
        self.recorder = ctx.recorder(self.component)
        self.deployments = ctx.informers.informer(DEPLOYMENTS, indexers=NAMESPACE_INDEXERS)
        self.replica_sets = ctx.informers.informer(REPLICASETS, indexers=NAMESPACE_INDEXERS)
        self.pods = ctx.informers.informer(PODS, indexers=NAMESPACE_INDEXERS)
        self.deployments.add_event_handler(self.enqueue, lambda old, cur: self.enqueue(cur),
                                           self.enqueue)
        self.replica_sets.add_event_handler(self._rs_added, self._rs_updated, self._rs_deleted)
        self.pods.add_event_handler(on_delete=self._pod_deleted)
        self.now = time.time
        #: key -> (resourceVersions our writes replaced, the last object we wrote)
        self._written: dict[str, tuple[set[str], Obj]] = {}

    # -- our own writes -----------------------------------------------------------------
    def _latest(self, key: str, cached: Obj) -> Obj:
        """The cached Deployment, or what we last wrote if the cache has not caught up with
        it yet (a small mutation cache, as client-go's MutationCache): a sync started by a
        ReplicaSet event right after our status write must not start from the stale copy
        and lose its own write to a conflict."""
        entry = self._written.get(key)
        if entry is not None:
            if cached["metadata"].get("resourceVersion") in entry[0]:
                return entry[1]
            del self._written[key]
        return cached

    def _remember(self, d: Obj, written: Obj) -> None:
        key = self.key_of(d)
        replaced = {d["metadata"].get("resourceVersion", "")}
        entry = self._written.get(key)
        if entry is not None and entry[1]["metadata"].get("resourceVersion") in replaced:
            replaced |= entry[0]
        self._written[key] = (replaced, written)
        d["metadata"]["resourceVersion"] = written["metadata"]["resourceVersion"]

    # -- keys and lookups ---------------------------------------------------------------
    @staticmethod
    def key_of(obj: Obj) -> str:
        md = obj.get("metadata") or {}
        return f"{md.get('namespace', '')}/{md.get('name', '')}"

    def enqueue(self, d: Obj) -> None:
        self.queue.add(self.key_of(d))

    def _resolve(self, namespace: str, ref: Obj | None, kind: str) -> Obj | None:
        if ref is None or ref.get("kind") != kind:
            return None
        informer = self.deployments if kind == "Deployment" else self.replica_sets
        obj = informer.indexer.get(f"{namespace}/{ref.get('name', '')}")
        if obj is None or obj["metadata"].get("uid") != ref.get("uid"):
            return None
        return obj

    def _deployments_selecting(self, rs: Obj) -> list[Obj]:
        md = rs["metadata"]
        return [d for d in in_namespace(self.deployments, md.get("namespace", ""))
                if du.selects(d, md.get("labels"))]

    def _deployment_for_pod(self, pod: Obj) -> Obj | None:
        namespace = pod["metadata"].get("namespace", "")
        rs = self._resolve(namespace, get_controller_of(pod), "ReplicaSet")
        if rs is None:
            return None
        return self._resolve(namespace, get_controller_of(rs), "Deployment")

    # -- events (upstream addReplicaSet / updateReplicaSet / deleteReplicaSet / deletePod) --
    def _rs_added(self, rs: Obj) -> None:
        if rs["metadata"].get("deletionTimestamp"):
            self._rs_deleted(rs)
            return
        ref = get_controller_of(rs)
        if ref is not None:
            d = self._resolve(rs["metadata"].get("namespace", ""), ref, "Deployment")
            if d is not None:
                self.enqueue(d)
            return
        for d in self._deployments_selecting(rs):
            self.enqueue(d)

    def _rs_updated(self, old: Obj, cur: Obj) -> None:
        namespace = cur["metadata"].get("namespace", "")
        cur_ref, old_ref = get_controller_of(cur), get_controller_of(old)
        ref_changed = (cur_ref or {}).get("uid") != (old_ref or {}).get("uid")
        if ref_changed and old_ref is not None:
            d = self._resolve(namespace, old_ref, "Deployment")
            if d is not None:
                self.enqueue(d)
        if cur_ref is not None:
            d = self._resolve(namespace, cur_ref, "Deployment")
            if d is not None:
                self.enqueue(d)
            return
        if ref_changed or old["metadata"].get("labels") != cur["metadata"].get("labels"):
            for d in self._deployments_selecting(cur):
                self.enqueue(d)

    def _rs_deleted(self, rs: Obj) -> None:
        d = self._resolve(rs["metadata"].get("namespace", ""), get_controller_of(rs), "Deployment")
        if d is not None:
            self.enqueue(d)

    def _pod_deleted(self, pod: Obj) -> None:
        """A Recreate rollout waits for the old pods to be gone: sync when the last goes."""
        d = self._deployment_for_pod(pod)
        if d is None or du.strategy_type(d) != du.RECREATE:
            return
        owned = {rs["metadata"]["uid"] for rs in in_namespace(self.replica_sets,
                                                               d["metadata"]["namespace"])
                 if (get_controller_of(rs) or {}).get("uid") == d["metadata"]["uid"]}
        if not any(self._pod_map(d, owned).values()):
            self.enqueue(d)

    # -- reading ------------------------------------------------------------------------
    async def get_replica_sets(self, d: Obj) -> list[Obj]:
        """The Deployment's ReplicaSets after adopting matching orphans and releasing
        owned ones that stopped matching (getReplicaSetsForDeployment)."""
        md = d["metadata"]
        selector = label_selector(d["spec"].get("selector"))

        async def fetch() -> Obj:
            return await self.client.get(DEPLOYMENTS, md["name"], md["namespace"])

        manager = ControllerRefManager(self.client, REPLICASETS, d, selector,
                                       controller_ref(d, "apps/v1", "Deployment"),
                                       recheck_deletion(fetch, d))
        return await manager.claim(in_namespace(self.replica_sets, md["namespace"]))

    def _pod_map(self, d: Obj, rs_uids: set[str]) -> dict[str, list[Obj]]:
        """The Deployment's pods grouped by owning ReplicaSet uid (getPodMapForDeployment)."""
        selector = label_selector(d["spec"].get("selector"))
        pods_by_rs: dict[str, list[Obj]] = {uid: [] for uid in rs_uids}
        for pod in in_namespace(self.pods, d["metadata"]["namespace"]):
            if not selector.matches(pod["metadata"].get("labels")):
                continue
            uid = (get_controller_of(pod) or {}).get("uid")
            if uid in pods_by_rs:
                pods_by_rs[uid].append(pod)
        return pods_by_rs

    # -- writing ------------------------------------------------------------------------
    async def write_status(self, d: Obj, status: Obj | None = None) -> None:
        """PUT the Deployment's status (its resourceVersion guards against lost updates);
        `d` takes the written status and resourceVersion."""
        if status is not None:
            d["status"] = status
        self._remember(d, await self.client.update_status(DEPLOYMENTS, d))

    async def set_revision(self, d: Obj, revision: str) -> None:
        """SetDeploymentRevision: the Deployment's revision annotation follows its new
        ReplicaSet's."""
        if du.annotations(d).get(du.REVISION_ANNOTATION) == revision:
            return
        d["metadata"].setdefault("annotations", {})[du.REVISION_ANNOTATION] = revision
        await self.write_status(d)

    async def scale_replica_set(self, rs: Obj, new_scale: int, d: Obj,
                                operation: str) -> tuple[bool, Obj]:
        """Resize `rs` and refresh its desired/max annotations (scaleReplicaSet); an event
        when the size changed."""
        size_changed = du.replicas(rs) != new_scale
        max_replicas = du.replicas(d) + du.max_surge(d)
        if not size_changed and not du.replicas_annotations_need_update(
                rs, du.replicas(d), max_replicas):
            return False, rs
        body = _copy(rs)
        body["spec"]["replicas"] = new_scale
        du.set_replicas_annotations(body, du.replicas(d), max_replicas)
        updated = await self.client.update(REPLICASETS, body)
        if size_changed:
            self.recorder.event(d, "Normal", "ScalingReplicaSet",
                                f"Scaled {operation} replica set {rs['metadata']['name']} "
                                f"to {new_scale}")
        return size_changed, updated

    async def scale_and_record(self, rs: Obj, new_scale: int, d: Obj) -> tuple[bool, Obj]:
        if du.replicas(rs) == new_scale:
            return False, rs
        operation = "up" if du.replicas(rs) < new_scale else "down"
        return await self.scale_replica_set(rs, new_scale, d, operation)

    # -- sync ---------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        cached = self.deployments.indexer.get(key)
        if cached is None:
            self._written.pop(key, None)
            return  # deleted; the garbage collector removes its ReplicaSets
        d = _copy(with_kind(self._latest(key, cached), "apps/v1", "Deployment"))
        d.setdefault("status", {})
        if d["spec"].get("selector") == {}:
            self.recorder.event(d, "Warning", "SelectingAll",
                                "This deployment is selecting all pods. A non-empty selector "
                                "is required.")
            if int(d["status"].get("observedGeneration") or 0) < int(d["metadata"].get("generation") or 0):
                d["status"]["observedGeneration"] = d["metadata"].get("generation")
                await self.write_status(d)
            return
        rss = await self.get_replica_sets(d)
        if d["metadata"].get("deletionTimestamp"):
            new_rs, old_rss = await self.get_all_replica_sets(d, rss, create=False)
            await self.sync_deployment_status([*old_rss, new_rs], new_rs, d)
            return
        await self.check_paused_conditions(d)
        if d["spec"].get("paused"):
            await self.sync_scale(d, rss)
            return
        new_rs, old_rss = await self.get_all_replica_sets(d, rss, create=False)
        if du.scaling_event(d, du.filter_active([*old_rss, new_rs])):
            await self.sync_scale(d, rss)
            return
        if du.strategy_type(d) == du.RECREATE:
            await self.rollout_recreate(d, rss)
        else:
            await self.rollout_rolling(d, rss)

    async def check_paused_conditions(self, d: Obj) -> None:
        """Progressing=Unknown DeploymentPaused/DeploymentResumed when pausing or resuming
        (checkPausedConditions); a timed-out rollout keeps its condition."""
        if not du.has_progress_deadline(d):
            return
        cond = ds.get_condition(d["status"], du.PROGRESSING)
        if cond is not None and cond.get("reason") == du.TIMED_OUT_REASON:
            return
        paused_cond = cond is not None and cond.get("reason") == du.PAUSED_REASON
        paused = bool(d["spec"].get("paused"))
        if paused and not paused_cond:
            ds.set_condition(d["status"], ds.new_condition(
                du.PROGRESSING, "Unknown", du.PAUSED_REASON, "Deployment is paused", self.now()))
        elif not paused and paused_cond:
            ds.set_condition(d["status"], ds.new_condition(
                du.PROGRESSING, "Unknown", du.RESUMED_REASON, "Deployment is resumed",
                self.now()))
        else:
            return
        await self.write_status(d)

    async def get_all_replica_sets(self, d: Obj, rss: list[Obj],
                                   create: bool) -> tuple[Obj | None, list[Obj]]:
        """(new ReplicaSet, old ReplicaSets), syncing the revision (getAllReplicaSetsAndSyncRevision)."""
        _, all_old = du.find_old_replica_sets(d, rss)
        return await self.get_new_replica_set(d, rss, all_old, create), all_old

    async def get_new_replica_set(self, d: Obj, rss: list[Obj], old_rss: list[Obj],
                                  create: bool) -> Obj | None:
        """The ReplicaSet for the current template: found and brought up to date (revision,
        annotations, minReadySeconds), or created when `create` (getNewReplicaSet)."""
        existing = du.find_new_replica_set(d, rss)
        new_revision = str(du.max_revision(old_rss) + 1)
        now = self.now()
        if existing is not None:
            rs = _copy(existing)
            annotations_updated = du.set_new_replica_set_annotations(d, rs, new_revision, True)
            min_ready = int(d["spec"].get("minReadySeconds") or 0)
            if annotations_updated or int(rs["spec"].get("minReadySeconds") or 0) != min_ready:
                rs["spec"]["minReadySeconds"] = min_ready
                updated = await self.client.update(REPLICASETS, rs)
                rss[rss.index(existing)] = updated  # later reads in this sync see the write
                return updated
            await self.set_revision(d, du.annotations(rs).get(du.REVISION_ANNOTATION, ""))
            if (du.has_progress_deadline(d)
                    and ds.get_condition(d["status"], du.PROGRESSING) is None):
                ds.set_condition(d["status"], ds.new_condition(
                    du.PROGRESSING, "True", du.FOUND_NEW_RS_REASON,
                    f'Found new replica set "{rs["metadata"]["name"]}"', now))
                await self.write_status(d)
            return rs
        if not create:
            return None
        template_hash = du.compute_hash(d["spec"].get("template") or {},
                                        d["status"].get("collisionCount"))
        new_rs = du.new_replica_set(d, template_hash, 0)
        count = du.new_rs_new_replicas(d, [*old_rss, new_rs], new_rs)
        new_rs["spec"]["replicas"] = count
        du.set_new_replica_set_annotations(d, new_rs, new_revision, False)
        name = new_rs["metadata"]["name"]
        already_exists = False
        try:
            created = await self.client.create(REPLICASETS, new_rs)
        except StatusError as exc:
            if exc.reason == "AlreadyExists":
                found = self.replica_sets.indexer.get(f"{d['metadata']['namespace']}/{name}")
                if found is None:
                    raise
                ref = get_controller_of(found)
                if (ref is not None and ref.get("uid") == d["metadata"]["uid"]
                        and du.equal_ignore_hash(d["spec"].get("template"),
                                                 found["spec"].get("template"))):
                    created, already_exists = found, True
                else:
                    # a hash collision: bump collisionCount so the next name differs
                    d["status"]["collisionCount"] = int(d["status"].get("collisionCount") or 0) + 1
                    await self.write_status(d)
                    raise
            else:
                message = f'Failed to create new replica set "{name}": {exc.message}'
                if du.has_progress_deadline(d):
                    ds.set_condition(d["status"], ds.new_condition(
                        du.PROGRESSING, "False", du.FAILED_RS_CREATE_REASON, message, now))
                    try:
                        await self.write_status(d)
                    except StatusError:
                        pass
                self.recorder.event(d, "Warning", du.FAILED_RS_CREATE_REASON, message)
                raise
        if not already_exists:
            rss.append(created)
        if not already_exists and count > 0:
            self.recorder.event(d, "Normal", "ScalingReplicaSet",
                                f"Scaled up replica set {name} to {count}")
        await self.set_revision(d, new_revision)
        if not already_exists and du.has_progress_deadline(d):
            ds.set_condition(d["status"], ds.new_condition(
                du.PROGRESSING, "True", du.NEW_RS_REASON, f'Created new replica set "{name}"', now))
            await self.write_status(d)
        return created

    # -- strategies ---------------------------------------------------------------------
    async def rollout_rolling(self, d: Obj, rss: list[Obj]) -> None:
        new_rs, old_rss = await self.get_all_replica_sets(d, rss, create=True)
        assert new_rs is not None
        all_rss = [*old_rss, new_rs]
        if await self.reconcile_new_replica_set(all_rss, new_rs, d):
            await self.sync_rollout_status(all_rss, new_rs, d)
            return
        if await self.reconcile_old_replica_sets(all_rss, du.filter_active(old_rss), new_rs, d):
            await self.sync_rollout_status(all_rss, new_rs, d)
            return
        if ds.deployment_complete(d, d["status"]):
            await self.cleanup(old_rss, d)
        await self.sync_rollout_status(all_rss, new_rs, d)

    async def reconcile_new_replica_set(self, all_rss: list[Obj], new_rs: Obj, d: Obj) -> bool:
        """Scale the new ReplicaSet up as far as maxSurge allows (or down to the count)."""
        if du.replicas(new_rs) == du.replicas(d):
            return False
        if du.replicas(new_rs) > du.replicas(d):
            return (await self.scale_and_record(new_rs, du.replicas(d), d))[0]
        count = du.new_rs_new_replicas(d, all_rss, new_rs)
        return (await self.scale_and_record(new_rs, count, d))[0]

    async def reconcile_old_replica_sets(self, all_rss: list[Obj], old_rss: list[Obj],
                                         new_rs: Obj, d: Obj) -> bool:
        """Scale old ReplicaSets down as far as maxUnavailable allows: unhealthy replicas
        first, then healthy ones, oldest ReplicaSets first."""
        if du.total_replicas(old_rss) == 0:
            return False
        budget = du.old_scale_down_budget(d, all_rss, new_rs)
        if budget <= 0:
            return False
        total = 0
        by_uid = {rs["metadata"]["uid"]: rs for rs in old_rss}
        for rs, count in du.cleanup_unhealthy_plan(old_rss, budget):
            _, updated = await self.scale_and_record(rs, count, d)
            total += du.replicas(rs) - count
            by_uid[rs["metadata"]["uid"]] = du.with_replicas(updated, count)
        old_rss = list(by_uid.values())
        for rs, count in du.scale_down_old_plan(d, [*old_rss, new_rs], old_rss):
            await self.scale_and_record(rs, count, d)
            total += du.replicas(rs) - count
        return total > 0

    async def rollout_recreate(self, d: Obj, rss: list[Obj]) -> None:
        """Scale every old ReplicaSet to 0, wait until no old pod runs, then scale the new
        one up (rolloutRecreate)."""
        new_rs, old_rss = await self.get_all_replica_sets(d, rss, create=False)
        all_rss: list[Obj | None] = [*old_rss, new_rs]
        scaled_down = False
        for rs in du.filter_active(old_rss):
            scaled, _ = await self.scale_and_record(rs, 0, d)
            scaled_down = scaled_down or scaled
        if scaled_down:
            await self.sync_rollout_status(all_rss, new_rs, d)
            return
        uids = {rs["metadata"]["uid"] for rs in rss}
        if du.old_pods_running(new_rs, old_rss, self._pod_map(d, uids)):
            await self.sync_rollout_status(all_rss, new_rs, d)
            return
        if new_rs is None:
            new_rs, old_rss = await self.get_all_replica_sets(d, rss, create=True)
            all_rss = [*old_rss, new_rs]
        assert new_rs is not None
        await self.scale_and_record(new_rs, du.replicas(d), d)
        if ds.deployment_complete(d, d["status"]):
            await self.cleanup(old_rss, d)
        await self.sync_rollout_status(all_rss, new_rs, d)

    async def sync_scale(self, d: Obj, rss: list[Obj]) -> None:
        """A resize or a paused Deployment: scale without rolling (upstream `sync`)."""
        new_rs, old_rss = await self.get_all_replica_sets(d, rss, create=False)
        await self.scale(d, new_rs, old_rss)
        if d["spec"].get("paused"):
            await self.cleanup(old_rss, d)
        await self.sync_deployment_status([*old_rss, new_rs], new_rs, d)

    async def scale(self, d: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> None:
        target = du.find_active_or_latest(new_rs, old_rss)
        if target is not None:
            if du.replicas(target) != du.replicas(d):
                await self.scale_and_record(target, du.replicas(d), d)
            return
        if du.is_saturated(d, new_rs):
            for rs in du.filter_active(old_rss):
                await self.scale_and_record(rs, 0, d)
            return
        if du.is_rolling_update(d):
            plan, operation = du.proportional_scale(d, du.filter_active([*old_rss, new_rs]))
            for rs, size in plan:
                await self.scale_replica_set(rs, size, d, operation)

    async def cleanup(self, old_rss: list[Obj], d: Obj) -> None:
        """Delete old ReplicaSets beyond revisionHistoryLimit (cleanupDeployment)."""
        for rs in du.cleanup_candidates(d, old_rss):
            md = rs["metadata"]
            self.log.info("deleting old replica set", deployment=d["metadata"]["name"],
                          replicaset=md["name"])
            try:
                await self.client.delete(REPLICASETS, md["name"], md["namespace"])
            except StatusError as exc:
                if not is_not_found(exc):
                    raise

    # -- status -------------------------------------------------------------------------
    async def sync_deployment_status(self, all_rss: list[Obj | None], new_rs: Obj | None,
                                     d: Obj) -> None:
        status = ds.calculate_status(all_rss, new_rs, d, self.now())
        if status != d["status"]:
            await self.write_status(d, status)

    async def sync_rollout_status(self, all_rss: list[Obj | None], new_rs: Obj | None,
                                  d: Obj) -> None:
        now = self.now()
        status = ds.rollout_status(d, all_rss, new_rs, now)
        if status == d["status"]:
            after = ds.progress_recheck_after(d, status, now)
            if after == 0:
                # upstream re-adds it rate-limited (its bucket allows 10 a second) until
                # the deadline passes; a tenth of a second is the same pace
                self.queue.add_after(self.key_of(d), 0.1)
            elif after is not None:
                self.queue.add_after(self.key_of(d), after)
            return
        await self.write_status(d, status)


def _copy(obj: Obj) -> Obj:
    return orjson.loads(orjson.dumps(obj))
