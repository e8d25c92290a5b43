"""The attach/detach controller: a CSI volume used by a pod gets a VolumeAttachment for the
pod's node, and loses it when no pod on that node uses the volume any more.

Kubernetes piece: pkg/controller/volume/attachdetach (kube-controller-manager's `attachdetach`,
running as `system:serviceaccount:kube-system:attachdetach-controller`). Upstream keeps a
desired and an actual state of the world and a reconciler that attaches and detaches through
the volume plugins; for CSI volumes "attach" means creating the VolumeAttachment that the
driver's external-attacher then marks attached, and "detach" deleting it. Here one key per
node: its sync computes the desired attachments from the node's pods (attachdetach_util.py),
creates the missing VolumeAttachments, deletes the ones nothing needs, and writes
node.status.volumesAttached from the attachments the attacher marked attached (upstream's
node status updater).

Simplified: a volume is detached once its pods are deleted or finished (upstream also waits for
the kubelet to report it unmounted in node.status.volumesInUse, which our kubelets do not
simulate); no maxWaitForUnmountDuration, no multi-attach errors.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import StatusError
from ..api.storage import unique_volume_name
from ..client.resources import (
    CSI_DRIVERS,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
    VOLUME_ATTACHMENTS,
)
from .attachdetach_util import desired_attachments, pod_claim_names, volume_attachment
from .base import Controller, ControllerContext

Obj = dict[str, Any]


def _d(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _key(obj: Obj) -> str:
    md = _d(obj.get("metadata"))
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


class AttachDetachController(Controller):
    name = "attachdetach"
    service_account = "attachdetach-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        #: node -> keys of its pods, and claim key -> nodes whose pods use it (our indexes:
        #: a claim bound or a volume provisioned after the pod was scheduled requeues those)
        self.pods_on: dict[str, set[str]] = {}
        self.claim_nodes: dict[str, set[str]] = {}
        self.pods = ctx.informers.informer(PODS)
        self.claims = ctx.informers.informer(PERSISTENT_VOLUME_CLAIMS)
        self.volumes = ctx.informers.informer(PERSISTENT_VOLUMES)
        self.drivers = ctx.informers.informer(CSI_DRIVERS)
        self.attachments = ctx.informers.informer(VOLUME_ATTACHMENTS)
        self.nodes = ctx.informers.informer(NODES)
        self.pods.add_event_handler(on_add=self._pod_seen,
                                    on_update=lambda old, new: self._pod_seen(new, old),
                                    on_delete=self._pod_gone)
        self.claims.add_event_handler(on_add=self._claim_seen,
                                      on_update=lambda old, new: self._claim_seen(new))
        self.volumes.add_event_handler(on_update=lambda old, new: self._volume_seen(new))
        self.attachments.add_event_handler(
            on_add=self._attachment_seen, on_update=lambda old, new: self._attachment_seen(new),
            on_delete=self._attachment_seen)

    # -- indexes and events -------------------------------------------------------------------
    def _pod_seen(self, pod: Obj, old: Obj | None = None) -> None:
        node = _d(pod.get("spec")).get("nodeName")
        if not node or not pod_claim_names(pod):
            return
        key = _key(pod)
        self.pods_on.setdefault(node, set()).add(key)
        namespace = _d(pod.get("metadata")).get("namespace", "")
        for claim in pod_claim_names(pod):
            self.claim_nodes.setdefault(f"{namespace}/{claim}", set()).add(node)
        if old is None or _d(old.get("spec")).get("nodeName") != node or \
                _d(old.get("status")).get("phase") != _d(pod.get("status")).get("phase"):
            self.queue.add(node)

    def _pod_gone(self, pod: Obj) -> None:
        node = _d(pod.get("spec")).get("nodeName")
        if not node or node not in self.pods_on:
            return
        self.pods_on[node].discard(_key(pod))
        if not self.pods_on[node]:
            del self.pods_on[node]
        self.queue.add(node)

    def _claim_seen(self, claim: Obj) -> None:
        for node in self.claim_nodes.get(_key(claim), ()):
            self.queue.add(node)

    def _volume_seen(self, volume: Obj) -> None:
        ref = _d(_d(volume.get("spec")).get("claimRef"))
        for node in self.claim_nodes.get(f"{ref.get('namespace', '')}/{ref.get('name', '')}",
                                         ()):
            self.queue.add(node)

    def _attachment_seen(self, attachment: Obj) -> None:
        node = _d(attachment.get("spec")).get("nodeName")
        if isinstance(node, str) and node:
            self.queue.add(node)

    # -- sync -----------------------------------------------------------------------------------
    def _attach_required(self, driver: str) -> bool:
        obj = self.drivers.indexer.get(driver)
        return obj is None or _d(obj.get("spec")).get("attachRequired") is not False

    async def sync(self, node: str) -> None:
        pods = [p for k in self.pods_on.get(node, ()) if (p := self.pods.indexer.get(k))]
        wanted = desired_attachments(
            node, pods, lambda ns, name: self.claims.indexer.get(f"{ns}/{name}"),
            self.volumes.indexer.get, self._attach_required)
        present = {a["metadata"]["name"]: a for a in self.attachments.indexer.list()
                   if _d(a.get("spec")).get("nodeName") == node}
        for name, att in wanted.items():
            if name not in present:
                await self._create(volume_attachment(att))
        for name, existing in present.items():
            if name not in wanted and not _d(existing.get("metadata")).get("deletionTimestamp"):
                await self._delete(name)
        attached = sorted(
            unique_volume_name(att.driver, att.handle) for name, att in wanted.items()
            if _d(_d(present.get(name)).get("status")).get("attached") is True)
        await self._node_status(node, attached)

    async def _create(self, attachment: Obj) -> None:
        try:
            await self.client.create(VOLUME_ATTACHMENTS, attachment)
        except StatusError as exc:
            if exc.code != 409:
                raise
        self.log.info("volume attachment created", attachment=attachment["metadata"]["name"],
                      node=attachment["spec"]["nodeName"])

    async def _delete(self, name: str) -> None:
        try:
            await self.client.delete(VOLUME_ATTACHMENTS, name)
        except StatusError as exc:
            if exc.code != 404:
                raise
        self.log.info("volume attachment deleted", attachment=name)

    async def _node_status(self, node: str, attached: list[str]) -> None:
        """The node status updater: node.status.volumesAttached, written only on change."""
        current = self.nodes.indexer.get(node)
        if current is None:
            return
        listed = sorted(_d(v).get("name", "") for v in
                        _d(current.get("status")).get("volumesAttached") or ())
        if listed == attached:
            return
        entries = [{"name": name, "devicePath": ""} for name in attached]
        try:
            await self.client.patch(NODES, node, {"status": {"volumesAttached": entries or None}},
                                    subresource="status")
        except StatusError as exc:
            if exc.code != 404:
                raise
