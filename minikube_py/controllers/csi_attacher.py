"""The simulated CSI driver's external attacher: marks its VolumeAttachments attached.

Kubernetes piece: kubernetes-csi external-attacher (the csi-attacher sidecar): for each
VolumeAttachment whose `spec.attacher` is its driver it calls ControllerPublishVolume and
records the outcome in `status.attached` (and `attachmentMetadata`) through the status
subresource; the kubelet waits for `attached: true` before mounting. The simulated driver
attaches at once and never fails. Detaching needs nothing here: the attach/detach controller
deletes the VolumeAttachment, and without the sidecar's finalizer (not simulated) it is gone.
Runs as `system:serviceaccount:kube-system:csi-hostpath-driver`.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import StatusError
from ..api.storage import HOSTPATH_DRIVER
from ..client.resources import VOLUME_ATTACHMENTS
from .base import Controller, ControllerContext, enqueue_key

Obj = dict[str, Any]


def needs_attach(attachment: Obj, driver: str) -> bool:
    spec = attachment.get("spec") or {}
    status = attachment.get("status") or {}
    return (spec.get("attacher") == driver and status.get("attached") is not True
            and not (attachment.get("metadata") or {}).get("deletionTimestamp"))


class CSIAttacher(Controller):
    name = "csi-hostpath-attacher"
    service_account = "csi-hostpath-driver"
    driver = HOSTPATH_DRIVER

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.attachments = ctx.informers.informer(VOLUME_ATTACHMENTS)
        self.attachments.add_event_handler(
            on_add=self._seen, on_update=lambda old, new: self._seen(new))

    def _seen(self, attachment: Obj) -> None:
        if needs_attach(attachment, self.driver):
            enqueue_key(self.queue, attachment)

    async def sync(self, key: str) -> None:
        attachment = self.attachments.indexer.get(key)
        if attachment is None or not needs_attach(attachment, self.driver):
            return
        try:
            await self.client.patch(VOLUME_ATTACHMENTS, key, {"status": {
                "attached": True, "attachmentMetadata": {"simulated": "true"}}},
                subresource="status")
        except StatusError as exc:
            if exc.code != 404:
                raise
            return
        self.log.info("volume attached", attachment=key,
                      node=(attachment.get("spec") or {}).get("nodeName"))
