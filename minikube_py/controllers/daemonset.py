"""The DaemonSet controller: one pod on every eligible node, placed by the default scheduler.

Kubernetes piece: pkg/controller/daemon/daemon_controller.go (DaemonSetsController: the
DaemonSet, pod, node and ControllerRevision handlers, syncDaemonSet, manage, syncNodes,
updateDaemonSetStatus) and update.go (constructHistory, snapshot, dedupCurHistories,
cleanupHistory, rollingUpdate). The decisions are in daemonset_util.py; revisions in history.py.

Since 1.12 upstream does not bind daemon pods itself: each pod gets a required node affinity
`metadata.name In [<node>]` and goes through the scheduler like any pod (so priorities,
preemption and resources apply). It runs as `system:serviceaccount:kube-system:daemon-set-
controller`; its role lets it create/delete/patch pods, write `daemonsets/status` (update
only) and manage controllerrevisions — nothing else, so this controller reads pods and nodes
from the informers only.

A sync: claim the namespace's pods and revisions; find or make the current revision; when the
expectations are met, create a pod for each node that should run one and has none, delete the
pods on nodes that should not run them (and failed or duplicate ones), then let the rolling
update replace old pods within maxUnavailable/maxSurge; prune history; write the status.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..api.errors import StatusError
from ..api.labels import LabelSelector
from ..client.errors import is_already_exists, is_conflict, is_not_found
from ..client.resources import CONTROLLER_REVISIONS, DAEMONSETS, NODES, PODS
from . import daemonset_util as util
from .base import Controller, ControllerContext, split_key
from .controller_utils import (
    NAMESPACE_INDEXERS,
    SLOW_START_INITIAL_BATCH_SIZE,
    ControllerExpectations,
    ControllerRefManager,
    PodControl,
    controller_ref,
    get_controller_of,
    in_namespace,
    label_selector,
    pod_key,
    recheck_deletion,
    slow_start_batch,
    with_kind,
)
from .deployment_util import compute_hash
from .history import (
    REVISION_HASH_LABEL,
    RevisionControl,
    revision_number,
    sort_revisions,
    template_patch,
)
from .sync_cpu import metered

Obj = dict[str, Any]

API_VERSION, KIND = "apps/v1", "DaemonSet"
#: BurstReplicas of the DaemonSet controller: most pods created or deleted per sync
BURST_REPLICAS = 250


class DaemonSetsController(Controller):
    """kube-controller-manager's `daemonset` controller."""

    name = "daemonset"
    service_account = "daemon-set-controller"
    component = "daemonset-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_daemonset_syncs
        self.expectations = ControllerExpectations()
        self.recorder = ctx.recorder(self.component)
        self.pod_control = PodControl(self.client, self.recorder)
        self.revision_control = RevisionControl(self.client)
        self.failed_backoff = util.FailedPodBackoff()
        self.daemon_sets = ctx.informers.informer(DAEMONSETS, indexers=NAMESPACE_INDEXERS)
        self.pods = ctx.informers.informer(PODS, indexers=NAMESPACE_INDEXERS)
        self.nodes = ctx.informers.informer(NODES)
        self.revisions = ctx.informers.informer(CONTROLLER_REVISIONS, indexers=NAMESPACE_INDEXERS)
        self.daemon_sets.add_event_handler(self._enqueue, lambda _o, c: self._enqueue(c),
                                           self._ds_deleted)
        self.pods.add_event_handler(self._pod_added, self._pod_updated, self._pod_deleted)
        self.nodes.add_event_handler(self._node_added, self._node_updated, self._node_added)
        self.revisions.add_event_handler(self._revision_changed,
                                         lambda _o, c: self._revision_changed(c),
                                         self._revision_changed)

    # -- keys and lookups ---------------------------------------------------------------
    @staticmethod
    def key_of(obj: Obj) -> str:
        md = obj.get("metadata") or {}
        return f"{md.get('namespace', '')}/{md.get('name', '')}"

    def _enqueue(self, ds: Obj, after: float = 0.0) -> None:
        if after > 0:
            self.queue.add_after(self.key_of(ds), after)
        else:
            self.queue.add(self.key_of(ds))

    def _ds_deleted(self, ds: Obj) -> None:
        self.expectations.delete(self.key_of(ds))
        self._enqueue(ds)

    def _owner(self, obj: Obj) -> Obj | None:
        """The DaemonSet `obj`'s controller reference names, if it still exists (same uid)."""
        ref = get_controller_of(obj)
        if ref is None or ref.get("kind") != KIND:
            return None
        namespace = (obj.get("metadata") or {}).get("namespace", "")
        ds = self.daemon_sets.indexer.get(f"{namespace}/{ref.get('name', '')}")
        if ds is None or (ds.get("metadata") or {}).get("uid") != ref.get("uid"):
            return None
        return ds

    def _selecting(self, obj: Obj) -> list[Obj]:
        """DaemonSets in the object's namespace whose selector matches it (orphan adopters)."""
        md = obj.get("metadata") or {}
        found = []
        for ds in in_namespace(self.daemon_sets, md.get("namespace", "")):
            selector = _selector(ds)
            if selector is not None and not selector.empty() and selector.matches(md.get("labels")):
                found.append(ds)
        return found

    # -- pod, node and revision events ----------------------------------------------------
    def _pod_added(self, pod: Obj) -> None:
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            self._pod_deleted(pod)
            return
        ds = self._owner(pod)
        if ds is not None:
            self.expectations.creation_observed(self.key_of(ds))
            self._enqueue(ds)
        elif get_controller_of(pod) is None:
            for ds in self._selecting(pod):
                self._enqueue(ds)

    def _pod_updated(self, old: Obj, cur: Obj) -> None:
        if (cur.get("metadata") or {}).get("deletionTimestamp"):
            self._pod_deleted(cur)
            return
        old_ds = self._owner(old)
        ds = self._owner(cur)
        if old_ds is not None and old_ds is not ds:
            self._enqueue(old_ds)
        if ds is not None:
            self._enqueue(ds)
            min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
            if min_ready > 0 and not util.is_pod_ready(old) and util.is_pod_ready(cur):
                self._enqueue(ds, after=min_ready + 1)
        elif get_controller_of(cur) is None:
            for candidate in self._selecting(cur):
                self._enqueue(candidate)

    def _pod_deleted(self, pod: Obj) -> None:
        ds = self._owner(pod)
        if ds is not None:
            self.expectations.deletion_observed(self.key_of(ds), pod_key(pod))
            self._enqueue(ds)

    def _node_added(self, node: Obj) -> None:
        for ds in self.daemon_sets.indexer.list():
            self._enqueue(ds)

    def _node_updated(self, old: Obj, cur: Obj) -> None:
        """Only labels and taints change where daemon pods belong (upstream
        shouldIgnoreNodeUpdate ignores status heartbeats)."""
        old_md, cur_md = old.get("metadata") or {}, cur.get("metadata") or {}
        if (old_md.get("labels") == cur_md.get("labels")
                and (old.get("spec") or {}).get("taints") == (cur.get("spec") or {}).get("taints")):
            return
        self._node_added(cur)

    def _revision_changed(self, revision: Obj) -> None:
        ds = self._owner(revision)
        if ds is not None:
            self._enqueue(ds)

    # -- sync -------------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        namespace, _ = split_key(key)
        ds = self.daemon_sets.indexer.get(key)
        if ds is None:
            self.expectations.delete(key)
            return
        ds = with_kind(ds, API_VERSION, KIND)
        selector = _selector(ds)
        if selector is None or selector.empty():
            return  # an empty selector would select every pod: upstream refuses to act
        if ds["metadata"].get("deletionTimestamp"):
            return
        nodes = self.nodes.indexer.list()
        pods = await self._claim(ds, selector, PODS, in_namespace(self.pods, namespace))
        current, old = await self._construct_history(ds, selector)
        hash_ = ((current.get("metadata") or {}).get("labels") or {}).get(REVISION_HASH_LABEL, "")
        now = time.time()
        node_verdicts = util.verdicts(util.daemon_pod_spec(ds), nodes)
        by_node = util.pods_by_node(pods)
        error: BaseException | None = None
        if self.expectations.satisfied(key):
            error = await self._manage(ds, node_verdicts, by_node, hash_, now)
            strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
            # only once what manage did has been observed (upstream checks the expectations
            # again): the two passes must never plan over each other's pending writes
            if (error is None and strategy.get("type") == "RollingUpdate"
                    and self.expectations.satisfied(key)):
                desired = [name for name, (run, _) in node_verdicts.items() if run]
                delete, create_on = util.rolling_update_plan(ds, by_node, desired, hash_, now)
                if delete or create_on:
                    error = await self._sync_nodes(ds, delete, create_on, hash_)
            await self._cleanup_history(ds, old, pods)
        status = util.calculate_status(ds, node_verdicts, by_node, hash_, now)
        await self._update_status(ds, status)
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        if min_ready > 0 and status["numberReady"] != status["numberAvailable"]:
            self._enqueue(ds, after=min_ready)
        if error is not None:
            raise error

    async def _claim(self, ds: Obj, selector: LabelSelector, resource: Any,
                     objs: list[Obj]) -> list[Obj]:
        md = ds["metadata"]

        async def fetch() -> Obj:
            return await self.client.get(DAEMONSETS, md["name"], md["namespace"])

        manager = ControllerRefManager(self.client, resource, ds, selector,
                                       controller_ref(ds, API_VERSION, KIND),
                                       recheck_deletion(fetch, ds))
        return await manager.claim(objs)

    async def _manage(self, ds: Obj, node_verdicts: dict[str, util.Verdict],
                      by_node: dict[str, list[Obj]], hash_: str,
                      now: float) -> BaseException | None:
        """manage: pods for nodes that need one, away from nodes that must not run one."""
        plan = util.NodePlan()
        for name, verdict in node_verdicts.items():
            util.plan_node(ds, verdict, name, by_node.get(name, []), hash_, now, plan)
        for name, pods in by_node.items():  # pods pinned to nodes that no longer exist
            if name not in node_verdicts:
                plan.delete.extend(p for p in pods if not p["metadata"].get("deletionTimestamp")
                                   and not (p.get("spec") or {}).get("nodeName"))
        clock = time.monotonic()
        for node, pod in plan.failed:
            backoff_key = f"{ds['metadata'].get('uid', '')}/{node}"
            wait = self.failed_backoff.wait(backoff_key, clock)
            if wait > 0:
                self._enqueue(ds, after=wait)
                continue
            self.failed_backoff.next(backoff_key, clock)
            self.recorder.event(ds, "Warning", "FailedDaemonPod",
                                f"Found failed daemon pod {pod['metadata'].get('namespace')}/"
                                f"{pod['metadata']['name']} on node {node}, will try to kill it")
            plan.delete.append(pod)
        if not plan.create_on and not plan.delete:
            return None
        return await self._sync_nodes(ds, plan.delete, plan.create_on, hash_)

    async def _sync_nodes(self, ds: Obj, delete: list[Obj], create_on: list[str],
                          hash_: str) -> BaseException | None:
        """syncNodes: create pinned pods and delete pods, at most BURST_REPLICAS of each,
        creations in slow-start batches; returns the first error."""
        key = self.key_of(ds)
        namespace = ds["metadata"]["namespace"]
        create_on = create_on[:BURST_REPLICAS]
        delete = delete[:BURST_REPLICAS]
        self.expectations.expect(key, len(create_on), [pod_key(p) for p in delete])
        template = util.pod_template(ds, hash_)
        ref = controller_ref(ds, API_VERSION, KIND)
        pending = iter(create_on)

        async def create() -> None:
            node = next(pending)
            try:
                await self.pod_control.create_pod(namespace, util.pin_to_node(template, node),
                                                  ds, ref)
            except BaseException:
                self.expectations.lower(key, add=1)
                raise

        successes, error = await slow_start_batch(len(create_on), SLOW_START_INITIAL_BATCH_SIZE,
                                                  create)
        skipped = len(create_on) - successes
        if error is not None and skipped > 0:
            # the batches never tried will not be observed either (failures lowered already)
            self.expectations.lower(key, add=len(create_on) - successes - 1)

        async def remove(pod: Obj) -> None:
            try:
                await self.pod_control.delete_pod(namespace, pod["metadata"]["name"], ds)
            except BaseException:
                self.expectations.lower(key, delete=1, pod_keys=[pod_key(pod)])
                raise

        results = await asyncio.gather(*(metered(remove(p)) for p in delete),
                                         return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not is_not_found(result):
                error = error or result
        return error

    # -- history ----------------------------------------------------------------------------
    async def _construct_history(self, ds: Obj, selector: LabelSelector) -> tuple[Obj, list[Obj]]:
        """constructHistory: (the current revision, the old ones); makes or renumbers the
        current one so it is always the highest."""
        md = ds["metadata"]
        revisions = await self._claim(ds, selector, CONTROLLER_REVISIONS,
                                      in_namespace(self.revisions, md["namespace"]))
        patch = template_patch(ds)
        current = [r for r in revisions if r.get("data") == patch]
        old = [r for r in revisions if r.get("data") != patch]
        number = max((revision_number(r) for r in old), default=0) + 1
        if not current:
            return await self._snapshot(ds, number), old
        keep, *duplicates = sorted(current, key=revision_number, reverse=True)
        for duplicate in duplicates:  # dedupCurHistories
            try:
                await self.revision_control.delete(duplicate)
            except StatusError as exc:
                if not is_not_found(exc):
                    raise
        if revision_number(keep) < number:
            keep = await self.revision_control.set_revision(keep, number)
        return keep, old

    async def _snapshot(self, ds: Obj, number: int) -> Obj:
        """snapshot: a revision named `<ds>-<template hash>` labelled with that hash."""
        md = ds["metadata"]
        spec = ds.get("spec") or {}
        collisions = (ds.get("status") or {}).get("collisionCount")
        hash_ = compute_hash(spec.get("template") or {}, collisions)
        labels = dict(((spec.get("template") or {}).get("metadata") or {}).get("labels") or {})
        labels[REVISION_HASH_LABEL] = hash_
        revision = {
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": f"{md['name']}-{hash_}", "namespace": md["namespace"],
                         "labels": labels,
                         "ownerReferences": [controller_ref(ds, API_VERSION, KIND)]},
            "data": template_patch(ds), "revision": number,
        }
        if md.get("annotations"):
            revision["metadata"]["annotations"] = dict(md["annotations"])
        try:
            return await self.client.create(CONTROLLER_REVISIONS, revision, md["namespace"])
        except StatusError as exc:
            if not is_already_exists(exc):
                raise
        existing = await self.client.get(CONTROLLER_REVISIONS, revision["metadata"]["name"],
                                         md["namespace"])
        if existing.get("data") == revision["data"]:
            return existing
        # a hash collision: bump status.collisionCount so the next sync picks another name
        fresh = await self.client.get(DAEMONSETS, md["name"], md["namespace"])
        if (fresh.get("status") or {}).get("collisionCount") != collisions:
            raise ValueError(f"found a stale collision count of DaemonSet {md['name']!r}; "
                             "will retry until it is updated")
        fresh_status = dict(fresh.get("status") or {})
        fresh_status["collisionCount"] = int(collisions or 0) + 1
        await self.client.update_status(DAEMONSETS, {**fresh, "status": fresh_status})
        raise ValueError(f"hash collision for revision {revision['metadata']['name']!r}")

    async def _cleanup_history(self, ds: Obj, old: list[Obj], pods: list[Obj]) -> None:
        """cleanupHistory: beyond revisionHistoryLimit, delete the oldest revisions that no
        live pod still carries the hash of."""
        limit = (ds.get("spec") or {}).get("revisionHistoryLimit")
        to_kill = len(old) - (10 if limit is None else int(limit))
        if to_kill <= 0:
            return
        live = {((p.get("metadata") or {}).get("labels") or {}).get(REVISION_HASH_LABEL)
                for p in pods}
        for revision in sort_revisions(old):
            if to_kill <= 0:
                break
            if ((revision.get("metadata") or {}).get("labels") or {}).get(
                    REVISION_HASH_LABEL) in live:
                continue
            try:
                await self.revision_control.delete(revision)
            except StatusError as exc:
                if not is_not_found(exc):
                    raise
            to_kill -= 1

    # -- status -----------------------------------------------------------------------------
    async def _update_status(self, ds: Obj, counts: Obj) -> None:
        """storeDaemonSetStatus: PUT /status when a count or the observed generation moved;
        one retry with a fresh read on a conflict."""
        current = ds
        for attempt in range(2):
            old = current.get("status") or {}
            generation = current["metadata"].get("generation")
            if _status_unchanged(old, counts, generation):
                return
            status = {**old, **counts, "observedGeneration": generation}
            if "numberUnavailable" not in counts:
                status.pop("numberUnavailable", None)
            try:
                await self.client.update_status(DAEMONSETS, {**current, "status": status})
                return
            except StatusError as exc:
                if attempt == 1 or not is_conflict(exc):
                    raise
                md = ds["metadata"]
                current = await self.client.get(DAEMONSETS, md["name"], md["namespace"])


def _selector(ds: Obj) -> LabelSelector | None:
    try:
        return label_selector((ds.get("spec") or {}).get("selector"))
    except StatusError:
        return None


def _status_unchanged(old: Obj, counts: Obj, generation: Any) -> bool:
    if old.get("observedGeneration") != generation:
        return False
    if any(old.get(k, 0) != v for k, v in counts.items()):
        return False
    return "numberUnavailable" in counts or not old.get("numberUnavailable")
