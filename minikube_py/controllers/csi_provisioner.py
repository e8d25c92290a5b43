"""The simulated CSI driver's external provisioner: makes a PersistentVolume for each claim
the claim binder hands to it, and deletes the volumes it made once they are Released.

Kubernetes piece: kubernetes-csi external-provisioner (the csi-provisioner sidecar of a CSI
driver's controller Deployment, built on sig-storage-lib-external-provisioner), here for the
simulated driver `hostpath.csi.minikube-py.io` whose "storage" always has room. The claim binder
(persistentvolume.py) annotates a claim `volume.kubernetes.io/storage-provisioner: <driver>`;
this controller then creates `pvc-<uid>` pre-bound to the claim (the binder finishes the
binding) with events `Provisioning` and `ProvisioningSucceeded` on the claim. For a
WaitForFirstConsumer class it waits until the scheduler's volume binding writes
`volume.kubernetes.io/selected-node`, and pins the volume to that node. Runs as
`system:serviceaccount:kube-system:csi-hostpath-driver` (cli/storage_addon.py's role).

Not simulated: the PV finalizer of HonorPVReclaimPolicy, capacity limits and
CSIStorageCapacity publishing, secrets, volume expansion.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import StatusError
from ..api.storage import HOSTPATH_DRIVER
from ..api.volume_helpers import storage_class_of
from ..client.resources import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
)
from .base import Controller, ControllerContext, enqueue_key
from .csi_provisioning import (
    provisioned_volume,
    should_delete,
    should_provision,
    volume_name,
)
from .persistentvolume_util import claim_key, meta

Obj = dict[str, Any]


class CSIProvisioner(Controller):
    name = "csi-hostpath-provisioner"
    service_account = "csi-hostpath-driver"
    workers = 2
    provisioner = HOSTPATH_DRIVER

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        #: the events' source is the provisioner, as the sidecar's recorder names it
        self.recorder = ctx.recorder(self.provisioner)
        self.claims = ctx.informers.informer(PERSISTENT_VOLUME_CLAIMS)
        self.volumes = ctx.informers.informer(PERSISTENT_VOLUMES)
        self.classes = ctx.informers.informer(STORAGE_CLASSES)
        self.claims.add_event_handler(
            on_add=lambda c: enqueue_key(self.queue, c),
            on_update=lambda old, new: enqueue_key(self.queue, new))
        self.volumes.add_event_handler(
            on_add=self._volume_seen, on_update=lambda old, new: self._volume_seen(new))

    def _volume_seen(self, volume: Obj) -> None:
        if should_delete(volume, self.provisioner):
            self.queue.add(f"volume:{meta(volume).get('name', '')}")

    async def sync(self, key: str) -> None:
        if key.startswith("volume:"):
            await self._delete(key.removeprefix("volume:"))
            return
        claim = self.claims.indexer.get(key)
        if claim is None:
            return
        storage_class = self.classes.indexer.get(storage_class_of(claim))
        if not should_provision(claim, self.provisioner, storage_class):
            return
        name = volume_name(claim)
        if self.volumes.indexer.get(name) is not None:
            return  # provisioned already; the binder binds it
        assert storage_class is not None
        if (claim.get("spec") or {}).get("selector") is not None:
            # external-provisioner's Provision refuses claims that select volumes by label
            self.recorder.event(claim, "Warning", "ProvisioningFailed",
                                f"failed to provision volume with StorageClass "
                                f'"{storage_class_of(claim)}": claim Selector is not supported')
            return
        self.recorder.event(claim, "Normal", "Provisioning",
                            f'External provisioner is provisioning volume for claim '
                            f'"{claim_key(claim)}"')
        try:
            await self.client.create(PERSISTENT_VOLUMES,
                                     provisioned_volume(claim, storage_class, self.provisioner))
        except StatusError as exc:
            if exc.code != 409:
                self.recorder.event(claim, "Warning", "ProvisioningFailed",
                                    f"failed to provision volume with StorageClass "
                                    f'"{storage_class_of(claim)}": {exc.message}')
                raise
            return
        self.recorder.event(claim, "Normal", "ProvisioningSucceeded",
                            f"Successfully provisioned volume {name}")
        self.log.info("volume provisioned", claim=claim_key(claim), volume=name)

    async def _delete(self, name: str) -> None:
        """deleteVolumeOperation: re-read, and delete only what still should be."""
        try:
            fresh = await self.client.get(PERSISTENT_VOLUMES, name)
        except StatusError as exc:
            if exc.code == 404:
                return
            raise
        if not should_delete(fresh, self.provisioner):
            return
        try:
            await self.client.delete(PERSISTENT_VOLUMES, name,
                                     preconditions={"uid": meta(fresh).get("uid", "")})
        except StatusError as exc:
            if exc.code in (404, 409):
                return
            self.recorder.event(fresh, "Warning", "VolumeFailedDelete", exc.message)
            raise
        self.log.info("volume deleted", volume=name)
