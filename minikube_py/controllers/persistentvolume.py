"""The persistent-volume claim binder: Pending claims get the smallest fitting Available volume;
a volume whose claim is gone is Released and then retained or deleted.

Kubernetes piece: pkg/controller/volume/persistentvolume (pv_controller.go + pv_controller_base.go,
started by kube-controller-manager as `persistentvolume-binder`; v1.0 had the same job in
pkg/volumeclaimbinder). Two kinds of keys go through one work queue with one worker, because
binding is not reentrant (two syncs could give one volume to two claims):

- `claim:<ns>/<name>` -> syncClaim: an unbound claim (no `pv.kubernetes.io/bind-completed`)
  is matched (persistentvolume_util.find_best_match) or, when it names a volume, checked
  against it and bound; a bound claim whose volume vanished or went to another claim is Lost.
- `volume:<name>` -> syncVolume: a volume without claimRef is Available; one whose claim is
  gone (or re-created with another uid) is Released and its reclaim policy runs: Retain keeps
  it Released, Delete deletes the PV object (the "storage asset" is simulated, so deletion
  always succeeds), Recycle fails as upstream does without a recycler plugin
  (`VolumeFailedRecycle`, phase Failed).

A binding is four writes in upstream's order — volume claimRef (+ bound-by-controller), volume
status Bound, claim volumeName (+ bind-completed, bound-by-controller), claim status Bound with
the volume's capacity and access modes — each a compare-and-swap PUT; a conflict fails the sync
and the queue retries it, and the next sync finishes what the last one started.

Like upstream, the controller keeps its own copy of the newest volumes and claims it has seen,
fed by the informers *and* by the answers to its own writes, so a sync right after a write does
not act on the informer's older copy. Beyond upstream: a volume becoming Available requeues the
Pending claims at once (upstream waits for the --pvclaimbinder-sync-period resync, 15 s, which
we also run).

Storage classes (issue 19): a claim binds only to volumes of its class ("" = no class). A
claim whose class is WaitForFirstConsumer is left to the scheduler (event
`WaitForFirstConsumer`) until the scheduler's volume binding names a node
(`volume.kubernetes.io/selected-node`). A claim of a class that finds no volume is handed to
the class's provisioner, which is always external here (there are no in-tree volume plugins):
the claim gets the `volume.kubernetes.io/storage-provisioner` annotations (and the beta one) and
an `ExternalProvisioning` event, as upstream's provisionClaimOperationExternal; a missing class,
or an in-tree provisioner name (`kubernetes.io/...`, e.g. `kubernetes.io/no-provisioner` of
local volumes), is `ProvisioningFailed`. A claim created with no class at all (storageClassName unset, not
"") before any default class existed gets the default class once one appears (the retroactive
assignment of 1.28+). A Released volume with reclaim policy Delete that a provisioner made
(`pv.kubernetes.io/provisioned-by`) is that provisioner's to delete, as upstream leaves it to
the external deleter.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..api.errors import StatusError
from ..api.storage import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_PROVISIONED_BY,
    ANN_STORAGE_PROVISIONER,
    default_class,
    is_delayed,
    provisioner_of,
    selected_node,
)
from ..api.volume_helpers import storage_class_of
from ..client.resources import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
)
from .base import Controller, ControllerContext
from .persistentvolume_util import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    CLAIM_BOUND,
    CLAIM_LOST,
    CLAIM_PENDING,
    VOLUME_AVAILABLE,
    VOLUME_BOUND,
    VOLUME_FAILED,
    VOLUME_RELEASED,
    annotations,
    bind_claim_to_volume,
    bind_volume_to_claim,
    check_volume_satisfy_claim,
    claim_key,
    claim_ref_key,
    claim_with_status,
    find_best_match,
    is_volume_bound_to_claim,
    is_volume_released,
    meta,
    phase,
    spec,
    unbind_volume,
    volume_with_phase,
)

Obj = dict[str, Any]
COMPONENT = "persistentvolume-controller"  # the events' source, as upstream
NORMAL, WARNING = "Normal", "Warning"
NO_VOLUME_MESSAGE = "no persistent volumes available for this claim and no storage class is set"
WAIT_FOR_CONSUMER_MESSAGE = "waiting for first consumer to be created before binding"


def external_provisioning_message(provisioner: str) -> str:
    """upstream provisionClaimOperationExternal's event text."""
    return (f"Waiting for a volume to be created either by the external provisioner "
            f"'{provisioner}' or manually by the system administrator. If volume creation is "
            "delayed, please verify that the provisioner is running and correctly registered.")


def _rv(obj: Obj | None) -> int:
    try:
        return int(meta(obj or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class PersistentVolumeController(Controller):
    name = "persistentvolume-binder"
    service_account = "persistent-volume-binder"
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.recorder = ctx.recorder(COMPONENT)
        self.resync_period = ctx.options.pvclaimbinder_sync_period
        #: the newest copy seen of each object (upstream's ctrl.volumes / ctrl.claims caches)
        self.volumes: dict[str, Obj] = {}
        self.claims: dict[str, Obj] = {}
        self.volume_informer = ctx.informers.informer(PERSISTENT_VOLUMES)
        self.claim_informer = ctx.informers.informer(PERSISTENT_VOLUME_CLAIMS)
        #: the class lister (upstream ctrl.classLister); a new class requeues pending claims
        self.class_informer = ctx.informers.informer(STORAGE_CLASSES)
        self.class_informer.add_event_handler(
            on_add=lambda sc: self._requeue_pending_claims(),
            on_update=lambda old, new: None)
        self.volume_informer.add_event_handler(
            on_add=self._volume_seen, on_update=lambda old, new: self._volume_seen(new),
            on_delete=self._volume_deleted)
        self.claim_informer.add_event_handler(
            on_add=self._claim_seen, on_update=lambda old, new: self._claim_seen(new),
            on_delete=self._claim_deleted)

    # -- caches and informer events -------------------------------------------------------
    def _store_volume(self, volume: Obj) -> bool:
        """Keep `volume` if it is newer than our copy (storeObjectUpdate); True if kept."""
        name = meta(volume).get("name", "")
        current = self.volumes.get(name)
        if current is not None and meta(current).get("uid") == meta(volume).get("uid") and \
                _rv(current) >= _rv(volume):
            return False  # ours is newer, or this is the answer to our own write coming back
        self.volumes[name] = volume
        return True

    def _store_claim(self, claim: Obj) -> bool:
        key = claim_key(claim)
        current = self.claims.get(key)
        if current is not None and meta(current).get("uid") == meta(claim).get("uid") and \
                _rv(current) >= _rv(claim):
            return False
        self.claims[key] = claim
        return True

    def _volume_seen(self, volume: Obj) -> None:
        if self._store_volume(volume):
            self.queue.add(f"volume:{meta(volume).get('name', '')}")
            if phase(volume) == VOLUME_AVAILABLE:
                self._requeue_pending_claims()

    def _volume_deleted(self, volume: Obj) -> None:
        self.volumes.pop(meta(volume).get("name", ""), None)
        ref = claim_ref_key(volume)
        if ref is not None:
            self.queue.add(f"claim:{ref}")  # its claim may now be Lost

    def _claim_seen(self, claim: Obj) -> None:
        if self._store_claim(claim):
            self.queue.add(f"claim:{claim_key(claim)}")

    def _claim_deleted(self, claim: Obj) -> None:
        self.claims.pop(claim_key(claim), None)
        volume = spec(claim).get("volumeName")
        if volume:
            self.queue.add(f"volume:{volume}")  # it is Released now

    def _requeue_pending_claims(self) -> None:
        for key, claim in self.claims.items():
            if ANN_BIND_COMPLETED not in annotations(claim):
                self.queue.add(f"claim:{key}")

    async def background(self) -> None:
        """The periodic resync (--pvclaimbinder-sync-period): every claim and volume again."""
        while True:
            await asyncio.sleep(self.resync_period)
            for key in list(self.claims):
                self.queue.add(f"claim:{key}")
            for name in list(self.volumes):
                self.queue.add(f"volume:{name}")

    # -- sync -------------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        kind, _, name = key.partition(":")
        if kind == "claim":
            claim = self.claims.get(name)
            if claim is not None:
                await self.sync_claim(claim)
        else:
            volume = self.volumes.get(name)
            if volume is not None:
                await self.sync_volume(volume)

    async def sync_claim(self, claim: Obj) -> None:
        if ANN_BIND_COMPLETED in annotations(claim):
            await self._sync_bound_claim(claim)
        else:
            await self._sync_unbound_claim(claim)

    async def _sync_unbound_claim(self, claim: Obj) -> None:
        wanted = spec(claim).get("volumeName")
        if not wanted:
            class_name = storage_class_of(claim)
            storage_class = self._class(class_name)
            delayed = is_delayed(storage_class)
            volume = find_best_match(claim, list(self.volumes.values()), delayed)
            if volume is not None:
                await self.bind(volume, claim)
                return
            if await self._assign_default_class(claim):
                return  # the claim's update comes back through the informer and is synced
            if delayed and not selected_node(claim):
                # the scheduler picks the node (and a volume) when a pod uses the claim
                self.recorder.event(claim, NORMAL, "WaitForFirstConsumer",
                                    WAIT_FOR_CONSUMER_MESSAGE)
            elif class_name:
                claim = await self.provision_claim(claim, class_name, storage_class)
            else:
                self.recorder.event(claim, NORMAL, "FailedBinding", NO_VOLUME_MESSAGE)
            await self._claim_status(claim, CLAIM_PENDING, None)
            return
        volume = self.volumes.get(wanted)
        if volume is None:
            await self._claim_status(claim, CLAIM_PENDING, None)  # retried on the next sync
            return
        if spec(volume).get("claimRef") is None:
            problem = check_volume_satisfy_claim(volume, claim)
            if problem is not None:
                self.recorder.event(claim, WARNING, "VolumeMismatch",
                                    f'Cannot bind to requested volume "{wanted}": {problem}')
                await self._claim_status(claim, CLAIM_PENDING, None)
                return
            await self.bind(volume, claim)
        elif is_volume_bound_to_claim(volume, claim):
            await self.bind(volume, claim)  # finish a binding someone started
        elif ANN_BOUND_BY_CONTROLLER not in annotations(claim):
            await self._claim_status(claim, CLAIM_PENDING, None)  # the user waits for it
        else:
            raise RuntimeError(f'invalid binding of claim "{claim_key(claim)}" to volume '
                               f'"{wanted}": volume already claimed by '
                               f'"{claim_ref_key(volume)}"')

    async def _assign_default_class(self, claim: Obj) -> bool:
        """assignDefaultStorageClass (retroactive default class, GA in 1.28): a claim whose
        storageClassName is unset (not "") and that found no volume gets today's default
        class; True when the claim was updated."""
        if spec(claim).get("storageClassName") is not None:
            return False
        chosen = default_class(self.class_informer.indexer.list())
        if chosen is None:
            return False
        await self._write_claim({**claim, "spec": {**spec(claim),
                                                    "storageClassName": chosen["metadata"]["name"]}})
        self.log.info("default storage class assigned", claim=claim_key(claim),
                      storage_class=chosen["metadata"]["name"])
        return True

    def _class(self, name: str) -> Obj | None:
        if not name:
            return None
        return self.class_informer.indexer.get(name)

    async def provision_claim(self, claim: Obj, class_name: str,
                              storage_class: Obj | None) -> Obj:
        """provisionClaim for an external provisioner: annotate the claim with the class's
        provisioner (setClaimProvisioner) and say who is expected to act; the answer is the
        claim as written."""
        if storage_class is None:
            self.recorder.event(claim, WARNING, "ProvisioningFailed",
                                f'storageclass.storage.k8s.io "{class_name}" not found')
            return claim
        provisioner = provisioner_of(storage_class)
        if provisioner.startswith("kubernetes.io/"):
            # findProvisionablePlugin: an in-tree name is never external, and there are no
            # in-tree provisioners here (kubernetes.io/no-provisioner among them)
            self.recorder.event(claim, WARNING, "ProvisioningFailed",
                                f"no volume plugin matched name: {provisioner}")
            return claim
        notes = annotations(claim)
        if notes.get(ANN_STORAGE_PROVISIONER) != provisioner or \
                notes.get(ANN_BETA_STORAGE_PROVISIONER) != provisioner:
            changed = {**claim, "metadata": {**meta(claim), "annotations": {
                **notes, ANN_STORAGE_PROVISIONER: provisioner,
                ANN_BETA_STORAGE_PROVISIONER: provisioner}}}
            claim = await self._write_claim(changed)
        self.recorder.event(claim, NORMAL, "ExternalProvisioning",
                            external_provisioning_message(provisioner))
        return claim

    async def _sync_bound_claim(self, claim: Obj) -> None:
        name = spec(claim).get("volumeName")
        if not name:
            await self._claim_lost(claim, "ClaimLost", "Bound claim has lost reference to "
                                                       "PersistentVolume. Data on the volume "
                                                       "is lost!")
            return
        volume = self.volumes.get(name)
        if volume is None:
            await self._claim_lost(claim, "ClaimLost", "Bound claim has lost its "
                                                       "PersistentVolume. Data on the volume "
                                                       "is lost!")
            return
        ref = spec(volume).get("claimRef")
        if ref is None or (isinstance(ref, dict) and ref.get("uid") == meta(claim).get("uid")):
            await self.bind(volume, claim)  # (re)establish both sides; no-op when done
            return
        await self._claim_lost(claim, "ClaimMisbound", "Two claims are bound to the same "
                                                       "volume, this one is bound incorrectly")

    async def sync_volume(self, volume: Obj) -> None:
        ref = spec(volume).get("claimRef")
        if not isinstance(ref, dict) or not ref.get("uid"):
            # unused, or pre-bound by the user and waiting for its claim's sync
            await self._volume_phase(volume, VOLUME_AVAILABLE)
            return
        claim = self.claims.get(claim_ref_key(volume) or "")
        if claim is not None and meta(claim).get("uid") != ref.get("uid"):
            claim = None  # deleted and re-created under the same name
        if claim is None:
            if phase(volume) not in (VOLUME_RELEASED, VOLUME_FAILED):
                self.log.info("volume is released", volume=meta(volume).get("name"),
                              reclaim_policy=spec(volume).get("persistentVolumeReclaimPolicy"))
                volume = await self._volume_phase(volume, VOLUME_RELEASED)
            await self.reclaim(volume)
            return
        wanted = spec(claim).get("volumeName")
        if not wanted:
            self.queue.add(f"claim:{claim_key(claim)}")  # the claim sync finishes the binding
        elif wanted == meta(volume).get("name"):
            await self._volume_phase(volume, VOLUME_BOUND)
        else:
            # the claim went to another volume: undo our half-binding (unbindVolume)
            updated = await self._write_volume(unbind_volume(volume))
            await self._volume_phase(updated, VOLUME_AVAILABLE)

    # -- binding ------------------------------------------------------------------------------
    async def bind(self, volume: Obj, claim: Obj) -> None:
        """Volume first, then its status, then the claim, then the claim's status."""
        changed = bind_volume_to_claim(volume, claim)
        if changed is not None:
            volume = await self._write_volume(changed)
        volume = await self._volume_phase(volume, VOLUME_BOUND)
        changed = bind_claim_to_volume(claim, volume)
        if changed is not None:
            claim = await self._write_claim(changed)
        await self._claim_status(claim, CLAIM_BOUND, volume)
        self.log.info("claim bound", claim=claim_key(claim), volume=meta(volume).get("name"))

    async def reclaim(self, volume: Obj) -> None:
        """reclaimVolume: what the volume's policy says to do once it is Released."""
        policy = spec(volume).get("persistentVolumeReclaimPolicy")
        if policy == "Retain":
            return
        if policy == "Delete":
            if annotations(volume).get(ANN_PROVISIONED_BY):
                return  # doDeleteVolume: an external deleter (its provisioner) deletes it
            # deleteVolumeOperation: re-read, and delete only what is still released
            name = meta(volume).get("name", "")
            try:
                fresh = await self.client.get(PERSISTENT_VOLUMES, name)
            except StatusError as exc:
                if exc.code == 404:
                    return
                raise
            if not is_volume_released(fresh, self.claims.get(claim_ref_key(fresh) or "")):
                return
            try:
                await self.client.delete(PERSISTENT_VOLUMES, name,
                                         preconditions={"uid": meta(volume).get("uid", "")})
            except StatusError as exc:
                if exc.code not in (404, 409):
                    raise
            self.log.info("volume deleted", volume=name)
            return
        if policy == "Recycle":
            await self._volume_phase(volume, VOLUME_FAILED, WARNING, "VolumeFailedRecycle",
                                     "No recycler plugin found for the volume!")
            return
        await self._volume_phase(volume, VOLUME_FAILED, WARNING, "VolumeUnknownReclaimPolicy",
                                 "Volume has unrecognized PersistentVolumeReclaimPolicy")

    # -- writes (each keeps the answer as our newest copy) ------------------------------------
    async def _write_volume(self, volume: Obj) -> Obj:
        written = await self.client.update(PERSISTENT_VOLUMES, volume)
        self._store_volume(written)
        return written

    async def _write_claim(self, claim: Obj) -> Obj:
        written = await self.client.update(PERSISTENT_VOLUME_CLAIMS, claim)
        self._store_claim(written)
        return written

    async def _volume_phase(self, volume: Obj, new_phase: str, event_type: str = "",
                            reason: str = "", message: str = "") -> Obj:
        """updateVolumePhase(WithEvent): write the phase if it differs; the event only then."""
        changed = volume_with_phase(volume, new_phase, message)
        if changed is None:
            return volume
        written = await self.client.update_status(PERSISTENT_VOLUMES, changed)
        self._store_volume(written)
        if new_phase == VOLUME_AVAILABLE:
            self._requeue_pending_claims()
        if reason:
            self.recorder.event(written, event_type, reason, message)
        return written

    async def _claim_status(self, claim: Obj, new_phase: str, volume: Obj | None) -> Obj:
        changed = claim_with_status(claim, new_phase, volume)
        if changed is None:
            return claim
        written = await self.client.update_status(PERSISTENT_VOLUME_CLAIMS, changed)
        self._store_claim(written)
        return written

    async def _claim_lost(self, claim: Obj, reason: str, message: str) -> None:
        """updateClaimStatusWithEvent(Lost): the event only when the phase changes."""
        if phase(claim) == CLAIM_LOST:
            return
        written = await self._claim_status(claim, CLAIM_LOST, None)
        self.recorder.event(written, WARNING, reason, message)
