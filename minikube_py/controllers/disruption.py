"""The disruption controller: keep every PodDisruptionBudget's status true to its pods.

Kubernetes piece: pkg/controller/disruption/disruption.go (DisruptionController: sync,
trySync, getExpectedPodCount, getExpectedScale and its finders, buildDisruptedPodMap,
countHealthyPods, updatePdbStatus, failSafe). Runs as `disruption-controller`, whose
bootstrap role lets it read budgets and workloads, get any `*/scale`, and update
`poddisruptionbudgets/status` — nothing else.

A sync reads the budget and the pods its selector matches from the informers and works out:

- expectedPods and desiredHealthy: an integer minAvailable counts the matching pods; a
  percentage, or maxUnavailable, is taken of the summed scale of the pods' controllers
  (ReplicaSet, the Deployment above a ReplicaSet, ReplicationController, or anything with a
  `scale` subresource found through discovery — StatefulSets and custom resources);
- currentHealthy: ready pods not being deleted and not evicted in the last two minutes
  (status.disruptedPods, which the eviction subresource fills and this controller prunes);
- disruptionsAllowed = currentHealthy - desiredHealthy (never below 0, 0 without expected
  pods), with the DisruptionAllowed condition.

A sync that fails writes the fail-safe status (no disruption allowed, SyncFailed) and is
retried; a conflict is only retried. A second queue withdraws (sets False) the
DisruptionTarget condition of pods an eviction marked but that were still not terminating two
minutes later (upstream's stale pod disruption clean-up). The arithmetic is api/poddisruptionbudget.py, shared with
the eviction subresource.
"""

from __future__ import annotations

import time
from typing import Any

from ..api import poddisruptionbudget as pdbutil
from ..api.meta import rfc3339
from ..client.errors import is_conflict, is_not_found
from ..client.resources import (
    DEPLOYMENTS,
    POD_DISRUPTION_BUDGETS,
    PODS,
    REPLICASETS,
    REPLICATION_CONTROLLERS,
)
from ..client.workqueue import WorkQueue
from .base import Controller, ControllerContext
from .controller_utils import (
    NAMESPACE_INDEXERS,
    get_controller_of,
    in_namespace,
    label_selector,
)

Obj = dict[str, Any]


class DisruptionController(Controller):
    name = "disruption"
    service_account = "disruption-controller"
    component = "controllermanager"  # upstream's recorder component for this controller

    def __init__(self, ctx: ControllerContext, clock: Any = time.time) -> None:
        super().__init__(ctx)
        self.clock = clock
        self.recorder = ctx.recorder(self.component)
        self.pdbs = ctx.informers.informer(POD_DISRUPTION_BUDGETS, indexers=NAMESPACE_INDEXERS)
        self.pods = ctx.informers.informer(PODS, indexers=NAMESPACE_INDEXERS)
        self.replicasets = ctx.informers.informer(REPLICASETS)
        self.deployments = ctx.informers.informer(DEPLOYMENTS)
        self.rcs = ctx.informers.informer(REPLICATION_CONTROLLERS)
        self.pdbs.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new),
                                    self._enqueue)
        self.pods.add_event_handler(self._pod_changed, self._pod_updated, self._pod_changed)
        #: (apiVersion, kind) -> plural, from discovery (upstream's RESTMapper)
        self._plurals: dict[tuple[str, str], str] = {}
        #: pods whose DisruptionTarget condition may go stale (upstream stalePodDisruptionQueue)
        self.stale_queue = WorkQueue()

    # -- events -------------------------------------------------------------------------
    def _enqueue(self, pdb: Obj, after: float = 0.0) -> None:
        md = pdb.get("metadata") or {}
        key = f"{md.get('namespace', '')}/{md.get('name', '')}"
        if after > 0:
            self.queue.add_after(key, after)
        else:
            self.queue.add(key)

    def _pod_changed(self, pod: Obj) -> None:
        md = pod.get("metadata") or {}
        for pdb in in_namespace(self.pdbs, md.get("namespace", "")):
            if pdbutil.budget_covers(pdb, pod):
                self._enqueue(pdb)
        deadline = pdbutil.stale_disruption_deadline(pod)
        if deadline is not None:
            self.stale_queue.add_after(f"{md.get('namespace', '')}/{md.get('name', '')}",
                                       max(deadline - self.clock(), 0.001))

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        self._pod_changed(new)
        if (old.get("metadata") or {}).get("labels") != (new.get("metadata") or {}).get("labels"):
            self._pod_changed(old)

    # -- stale DisruptionTarget conditions (upstream syncStalePodDisruption) ---------------
    async def background(self) -> None:
        try:
            while True:
                key = await self.stale_queue.get()
                await self.resumed()
                try:
                    await self.sync_stale_pod_disruption(key)
                except Exception as exc:  # noqa: BLE001 - retried with backoff
                    if not is_not_found(exc):
                        self.log.warning("stale pod disruption", pod=key, error=str(exc))
                        self.stale_queue.add_rate_limited(key)
                else:
                    self.stale_queue.forget(key)
                finally:
                    self.stale_queue.done(key)
        finally:
            self.stale_queue.shutdown()

    async def sync_stale_pod_disruption(self, key: str) -> None:
        """An eviction marked the pod DisruptionTarget but it was not deleted within two
        minutes: the condition is set False again, through pods/status."""
        pod = self.pods.indexer.get(key)
        if pod is None:
            return
        deadline = pdbutil.stale_disruption_deadline(pod)
        if deadline is None:
            return
        now = self.clock()
        if deadline > now:
            self.stale_queue.add_after(key, deadline - now)
            return
        md = pod["metadata"]
        await self.client.patch(PODS, md["name"], {"status": {"conditions": [{
            "type": pdbutil.DISRUPTION_TARGET, "status": "False",
            "lastTransitionTime": rfc3339(now)}]}}, md.get("namespace"),
            patch_type="strategic", subresource="status")

    # -- sync -----------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        pdb = self.pdbs.indexer.get(key)
        if pdb is None:
            return
        try:
            await self._try_sync(pdb)
        except Exception as exc:
            if is_conflict(exc):
                raise
            # upstream failSafe: the sync counts as done once the safe status is written
            # (the next pod or budget event syncs again); only a failed write is retried
            self.log.warning("failed to sync PDB", pdb=key, error=str(exc))
            status = pdbutil.fail_safe_status(pdb, getattr(exc, "message", None) or str(exc),
                                              self.clock())
            await self.client.update_status(POD_DISRUPTION_BUDGETS, dict(pdb, status=status))

    def pods_for(self, pdb: Obj) -> list[Obj]:
        """getPodsForPdb: the namespace's pods its selector matches (`{}` matches all)."""
        md = pdb.get("metadata") or {}
        selector = label_selector((pdb.get("spec") or {}).get("selector"))
        return [pod for pod in in_namespace(self.pods, md.get("namespace", ""))
                if selector.matches((pod.get("metadata") or {}).get("labels"))]

    async def _try_sync(self, pdb: Obj) -> None:
        pods = self.pods_for(pdb)
        if not pods:
            self.recorder.event(pdb, "Normal", "NoPods", "No matching pods found")
        expected, desired, unmanaged = await self.expected_pod_count(pdb, pods)
        if unmanaged:
            self.recorder.event(
                pdb, "Warning", "UnmanagedPods",
                f"Pods selected by this PodDisruptionBudget (selector: "
                f"{(pdb.get('spec') or {}).get('selector')}) were found to be unmanaged. As a "
                "result, the status of the PDB cannot be calculated correctly, which may "
                "result in undefined behavior. To account for these pods please set "
                "\".spec.minAvailable\" field of the PDB to an integer value.")
        now = self.clock()
        disrupted, recheck, expired = pdbutil.build_disrupted_pod_map(pods, pdb, now)
        md = pdb.get("metadata") or {}
        for pod in pods:
            if (pod.get("metadata") or {}).get("name") in expired:
                self.recorder.event(pod, "Warning", "NotDeleted",
                                    f"Pod was expected by PDB {md.get('namespace')}/"
                                    f"{md.get('name')} to be deleted but it wasn't")
        healthy = pdbutil.count_healthy_pods(pods, disrupted, now)
        status = pdbutil.next_status(pdb, healthy, desired, expected, disrupted, now)
        if status is not None:
            await self.client.update_status(POD_DISRUPTION_BUDGETS, dict(pdb, status=status))
        if recheck is not None:
            self._enqueue(pdb, max(recheck - now, 0.001))

    async def expected_pod_count(self, pdb: Obj, pods: list[Obj]) -> tuple[int, int, list[str]]:
        """getExpectedPodCount: (expectedPods, desiredHealthy, unmanaged pod names)."""
        spec = pdb.get("spec") or {}
        max_unavailable, min_available = spec.get("maxUnavailable"), spec.get("minAvailable")
        if max_unavailable is not None:
            expected, unmanaged = await self.expected_scale(pods)
            unavailable = pdbutil.scaled_value(max_unavailable, expected, True)
            return expected, max(expected - unavailable, 0), unmanaged
        if isinstance(min_available, int) and not isinstance(min_available, bool):
            return len(pods), min_available, []
        if min_available is not None:
            expected, unmanaged = await self.expected_scale(pods)
            return expected, pdbutil.scaled_value(min_available, expected, True), unmanaged
        return 0, 0, []

    async def expected_scale(self, pods: list[Obj]) -> tuple[int, list[str]]:
        """getExpectedScale: the sum of the scales of the pods' distinct controllers; pods
        without a controller are reported, a controller nobody can scale is an error."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            md = pod.get("metadata") or {}
            ref = get_controller_of(pod)
            if ref is None:
                unmanaged.append(md.get("name", ""))
                continue
            if ref.get("uid") in scales:
                continue
            found = await self.find_controller(ref, md.get("namespace", ""))
            if found is None:
                raise LookupError(f'found no controllers for pod "{md.get("name", "")}"')
            scales[found[0]] = found[1]
        return sum(scales.values()), unmanaged

    # -- finders (upstream dc.finders()) ---------------------------------------------------
    async def find_controller(self, ref: Obj, namespace: str) -> tuple[str, int] | None:
        for finder in (self._replica_set, self._deployment, self._replication_controller):
            found = finder(ref, namespace)
            if found is not None:
                return found
        return await self._scale_controller(ref, namespace)

    @staticmethod
    def _owned(informer: Any, ref: Obj, namespace: str, kind: str, group: str) -> Obj | None:
        if ref.get("kind") != kind or str(ref.get("apiVersion", "")).rpartition("/")[0] != group:
            return None
        obj = informer.indexer.get(f"{namespace}/{ref.get('name', '')}")
        if obj is None or (obj.get("metadata") or {}).get("uid") != ref.get("uid"):
            return None
        return obj

    @staticmethod
    def _replicas(obj: Obj) -> tuple[str, int]:
        replicas = (obj.get("spec") or {}).get("replicas")
        return obj["metadata"]["uid"], 1 if replicas is None else int(replicas)

    def _replica_set(self, ref: Obj, namespace: str) -> tuple[str, int] | None:
        """getPodReplicaSet: a ReplicaSet not itself controlled by a Deployment."""
        rs = self._owned(self.replicasets, ref, namespace, "ReplicaSet", "apps")
        if rs is None:
            return None
        owner = get_controller_of(rs)
        if owner is not None and owner.get("kind") == "Deployment":
            return None
        return self._replicas(rs)

    def _deployment(self, ref: Obj, namespace: str) -> tuple[str, int] | None:
        """getPodDeployment: pod -> ReplicaSet -> the Deployment that controls it."""
        rs = self._owned(self.replicasets, ref, namespace, "ReplicaSet", "apps")
        owner = get_controller_of(rs) if rs is not None else None
        if owner is None:
            return None
        deployment = self._owned(self.deployments, owner, namespace, "Deployment", "apps")
        return None if deployment is None else self._replicas(deployment)

    def _replication_controller(self, ref: Obj, namespace: str) -> tuple[str, int] | None:
        rc = self._owned(self.rcs, ref, namespace, "ReplicationController", "")
        return None if rc is None else self._replicas(rc)

    async def _plural(self, api_version: str, kind: str) -> str | None:
        """The resource serving `kind` in `api_version`, from discovery (RESTMapping). Only
        hits are remembered: a miss reads discovery again next time, as upstream's deferred
        mapper resets itself (a CRD may have been established since)."""
        key = (api_version, kind)
        if key not in self._plurals:
            path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
            listing = await self.client.get_path(path)
            for resource in listing.get("resources") or ():
                if resource.get("kind") == kind and "/" not in resource.get("name", ""):
                    self._plurals[key] = resource["name"]
                    break
        return self._plurals.get(key)

    async def _scale_controller(self, ref: Obj, namespace: str) -> tuple[str, int] | None:
        """getScaleController: any controller whose resource has a scale subresource
        (StatefulSets, custom resources); a scale of another object (uid) is not it."""
        api_version, kind, name = ref.get("apiVersion", ""), ref.get("kind", ""), ref.get("name", "")
        plural = await self._plural(api_version, kind)
        if plural is None:
            raise LookupError(f"no matches for kind {kind!r} in version {api_version!r}")
        root = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        try:
            scale = await self.client.get_path(f"{root}/namespaces/{namespace}/{plural}/{name}/scale")
        except Exception as exc:
            if is_not_found(exc):
                return None
            raise
        if (scale.get("metadata") or {}).get("uid") != ref.get("uid"):
            return None
        return ref["uid"], int((scale.get("spec") or {}).get("replicas") or 0)
