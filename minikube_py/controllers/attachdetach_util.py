"""The attach/detach controller's pure half: which CSI volumes a node should have attached,
and the VolumeAttachment that says so.

Kubernetes pieces: pkg/controller/volume/attachdetach (the desired state of the world: every
volume of every pod scheduled to a node and not yet terminated, resolved through its claim to
the PersistentVolume) and pkg/volume/csi/csi_attacher.go (Attach: a VolumeAttachment named
`csi-<sha256(volumeHandle + driver + node)>` with the driver as attacher, the PV as source and
the node; a driver whose CSIDriver object says `attachRequired: false` is skipped, and one
without a CSIDriver object needs attaching). The names match upstream's byte for byte, so a
`kubectl get volumeattachment` lists what a real cluster would.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

Obj = dict[str, Any]


def _d(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


class Attachment(NamedTuple):
    name: str  # the VolumeAttachment's
    driver: str
    volume: str  # the PersistentVolume's name
    handle: str  # the CSI volumeHandle
    node: str


def attachment_name(handle: str, driver: str, node: str) -> str:
    """csi_attacher getAttachmentName."""
    return "csi-" + hashlib.sha256(f"{handle}{driver}{node}".encode()).hexdigest()


def pod_claim_names(pod: Obj) -> list[str]:
    return [claim["claimName"] for v in _d(pod.get("spec")).get("volumes") or ()
            if isinstance(claim := _d(v).get("persistentVolumeClaim"), dict)
            and isinstance(claim.get("claimName"), str) and claim.get("claimName")]


def pod_is_active(pod: Obj) -> bool:
    """Scheduled, and not finished (a finished pod's volumes are detached)."""
    return bool(_d(pod.get("spec")).get("nodeName")) and \
        _d(pod.get("status")).get("phase") not in ("Succeeded", "Failed")


def desired_attachments(node: str, pods: Iterable[Obj],
                        claim: Callable[[str, str], Obj | None],
                        volume: Callable[[str], Obj | None],
                        attach_required: Callable[[str], bool]) -> dict[str, Attachment]:
    """The attachments `node` should have for `pods` (those scheduled there), by name."""
    out: dict[str, Attachment] = {}
    for pod in pods:
        if not pod_is_active(pod):
            continue
        namespace = _d(pod.get("metadata")).get("namespace", "")
        for claim_name in pod_claim_names(pod):
            pvc = claim(namespace, claim_name)
            pv_name = _d(_d(pvc).get("spec")).get("volumeName") if pvc else None
            pv = volume(pv_name) if isinstance(pv_name, str) and pv_name else None
            csi = _d(_d(_d(pv).get("spec")).get("csi"))
            driver, handle = csi.get("driver"), csi.get("volumeHandle")
            if not isinstance(driver, str) or not isinstance(handle, str) or not driver \
                    or not attach_required(driver):
                continue
            name = attachment_name(handle, driver, node)
            out[name] = Attachment(name, driver, pv_name, handle, node)
    return out


def volume_attachment(att: Attachment) -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
            "metadata": {"name": att.name},
            "spec": {"attacher": att.driver, "nodeName": att.node,
                     "source": {"persistentVolumeName": att.volume}}}
