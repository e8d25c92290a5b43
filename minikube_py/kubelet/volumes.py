"""The simulated kubelet "mounts" a pod's volumes before any container starts: a volume backed
by an API object must find that object (and a claim must be Bound) or the pod waits.

Kubernetes pieces: pkg/kubelet/volumemanager — the desired-state-of-world populator's
createVolumeSpec / getPVCExtractPV / getPVSpec (a claim that is missing, being deleted, not
Bound, or whose volume does not point back at it cannot even be processed), the reconciler's
MountVolume.SetUp of configMap and secret volumes (`configmap "x" not found` unless the source
is `optional`), and WaitForAttachAndMount, which kubelet's syncPod calls before creating the
sandbox: while it fails the pod stays Pending with its containers `ContainerCreating`, and the
kubelet reports `FailedMount` Warnings in upstream's words:

    Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[],
    failed to process volumes=[data]: error processing PVC default/data: PVC is not bound
    MountVolume.SetUp failed for volume "config" : configmap "app-config" not found

What is simulated: nothing is attached or mounted anywhere; a volume counts as mounted once the
objects behind it exist (and, for a claim, are bound to each other) and, for a CSI volume whose
driver needs attaching, once the Node's status.volumesAttached lists it (upstream's
VerifyControllerAttachedVolume: the attach/detach controller writes it after the driver's
attacher marked the VolumeAttachment attached); until then the volume is "unattached" in the
event, which ends "timed out waiting for the condition" when nothing else is wrong. emptyDir, hostPath,
downwardAPI and the other sources need no API object and always "mount". Upstream's
populator re-reads the objects every 100 ms and WaitForAttachAndMount polls every 300 ms; we
retry from 0.3 s, doubling to 2 s, for as long as the pod waits (each attempt is a few GETs).

Split as usual: `volume_refs`, `claim_problem`, `source_problem` and `mount_events` are pure;
`VolumeReader` does the GETs; `Mounter` runs the attempts on the node's timers and calls the
pod worker back once every volume is mounted (podworker.py never waits itself).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, NamedTuple

import structlog

from ..api.storage import unique_volume_name
from ..client import Client
from ..client.resources import (
    CONFIGMAPS,
    CSI_DRIVERS,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    SECRETS,
)
from .reads import ClusterReads
from .timers import Step, Timers

log = structlog.get_logger(component="kubelet")

Obj = dict[str, Any]
CLAIM, CONFIG_MAP, SECRET = "persistentVolumeClaim", "configMap", "secret"
FAILED_MOUNT = "FailedMount"
RETRY_INITIAL_SECONDS = 0.3   # upstream podAttachAndMountRetryInterval
RETRY_MAX_SECONDS = 2.0


class VolumeRef(NamedTuple):
    """A pod volume backed by an API object in the pod's namespace."""

    volume: str      # the pod's name for it
    kind: str        # CLAIM, CONFIG_MAP or SECRET
    name: str        # the object's name
    optional: bool   # configMap/secret `optional: true`: a missing object is fine


class MountProblem(NamedTuple):
    volume: str
    message: str
    #: True: the volume could not even be processed (a claim's problems, reported in the
    #: "Unable to attach or mount volumes" event); False: its SetUp failed
    processing: bool
    #: a CSI volume its node does not list as attached yet (the attach/detach controller and
    #: the driver's attacher have not finished): "unattached volumes" in that event
    unattached: bool = False


#: what the "Unable to attach or mount volumes" event ends with when nothing failed to process
#: but a volume is still unattached (WaitForAttachAndMount's wait.ErrWaitTimeout)
ATTACH_TIMEOUT = "timed out waiting for the condition"


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def volume_refs(pod: Obj) -> list[VolumeRef]:
    """The volumes of `pod` that name a claim, ConfigMap or Secret (projected sources
    included, under the projected volume's name)."""
    refs: list[VolumeRef] = []
    for volume in _d(pod.get("spec")).get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        name = volume.get("name") or ""
        claim = _d(volume.get("persistentVolumeClaim"))
        if claim.get("claimName"):
            refs.append(VolumeRef(name, CLAIM, claim["claimName"], False))
        config = _d(volume.get("configMap"))
        if config.get("name"):
            refs.append(VolumeRef(name, CONFIG_MAP, config["name"], config.get("optional") is True))
        secret = _d(volume.get("secret"))
        if secret.get("secretName"):
            refs.append(VolumeRef(name, SECRET, secret["secretName"],
                                  secret.get("optional") is True))
        for source in _d(volume.get("projected")).get("sources") or ():
            for kind, resource in ((CONFIG_MAP, "configMap"), (SECRET, "secret")):
                projected = _d(_d(source).get(resource))
                if projected.get("name"):
                    refs.append(VolumeRef(name, kind, projected["name"],
                                          projected.get("optional") is True))
    return refs


def claim_problem(namespace: str, claim_name: str, claim: Obj | None,
                  volume: Obj | None) -> str | None:
    """createVolumeSpec for a claim: why it cannot be processed (None: it can). `claim` is the
    claim as read (None: not found); `volume` the PersistentVolume it names (None: not found
    or not read)."""
    prefix = f"error processing PVC {namespace}/{claim_name}: "
    if claim is None:
        return (prefix + "failed to fetch PVC from API server: "
                f'persistentvolumeclaims "{claim_name}" not found')
    if _d(claim.get("metadata")).get("deletionTimestamp"):
        return prefix + "PVC is being deleted"
    if _d(claim.get("status")).get("phase") != "Bound":
        return prefix + "PVC is not bound"
    pv_name = _d(claim.get("spec")).get("volumeName")
    if not pv_name:
        return prefix + "PVC has empty pvc.Spec.VolumeName"
    if volume is None:
        return (prefix + f"failed to fetch PV {pv_name} from API server: "
                f'persistentvolumes "{pv_name}" not found')
    ref = _d(volume.get("spec")).get("claimRef")
    if not isinstance(ref, dict):
        return (prefix + f"found PV object {pv_name} but it has a nil pv.Spec.ClaimRef "
                "indicating it is not yet bound to the claim")
    uid = _d(claim.get("metadata")).get("uid", "")
    if ref.get("uid", "") != uid:
        return (prefix + f"found PV object {pv_name} but its pv.Spec.ClaimRef.UID "
                f"{ref.get('uid', '')} does not point to claim.UID {uid}")
    return None


def source_problem(ref: VolumeRef, obj: Obj | None) -> str | None:
    """MountVolume.SetUp of a configMap/secret volume: the object must exist unless optional."""
    if obj is not None or ref.optional:
        return None
    what = "configmap" if ref.kind == CONFIG_MAP else "secret"
    return f'MountVolume.SetUp failed for volume "{ref.volume}" : {what} "{ref.name}" not found'


def _go_list(names: list[str]) -> str:
    """fmt's %v of a []string: `[a b]`."""
    return "[" + " ".join(names) + "]"


def mount_events(problems: list[MountProblem]) -> list[str]:
    """The FailedMount messages for one failed attempt: one per SetUp failure, and one
    "Unable to attach or mount volumes" when some volume could not be processed."""
    messages = [p.message for p in problems if not p.processing and not p.unattached]
    processing = [p for p in problems if p.processing]
    unattached = list(dict.fromkeys(p.volume for p in problems if p.unattached))
    if processing or unattached:
        unmounted = list(dict.fromkeys(p.volume for p in problems))
        failed = list(dict.fromkeys(p.volume for p in processing))
        reason = "; ".join(p.message for p in processing) if processing else ATTACH_TIMEOUT
        messages.append(
            "Unable to attach or mount volumes: unmounted volumes="
            f"{_go_list(unmounted)}, unattached volumes={_go_list(unattached)}, failed to "
            f"process volumes={_go_list(failed)}: {reason}")
    return messages


def attached_problem(ref_volume: str, volume: Obj, node: Obj | None,
                     attach_required: bool) -> MountProblem | None:
    """VerifyControllerAttachedVolume for a CSI volume: with controller-managed attachment the
    kubelet mounts only what its Node's status.volumesAttached lists (None: nothing to wait
    for: not CSI, or its driver needs no attach)."""
    csi = _d(_d(volume.get("spec")).get("csi"))
    driver, handle = csi.get("driver"), csi.get("volumeHandle")
    if not isinstance(driver, str) or not isinstance(handle, str) or not attach_required:
        return None
    wanted = unique_volume_name(driver, handle)
    listed = {_d(v).get("name") for v in _d(_d(node).get("status")).get("volumesAttached") or ()}
    if wanted in listed:
        return None
    return MountProblem(ref_volume, f"Volume not attached according to node status for volume "
                        f'"{wanted}"', False, True)


def retry_delay(attempt: int) -> float:
    return min(RETRY_INITIAL_SECONDS * 2 ** attempt, RETRY_MAX_SECONDS)


class VolumeReader:
    """The I/O: read the objects a pod's volumes name (through reads.ClusterReads: the shared
    caches in the all-in-one process, the API server otherwise)."""

    def __init__(self, client: Client | ClusterReads) -> None:
        self.client = client

    async def _get(self, resource: Any, name: str, namespace: str | None) -> Obj | None:
        return await self.client.get_or_none(resource, name, namespace)

    async def problems(self, pod: Obj) -> list[MountProblem]:
        namespace = _d(pod.get("metadata")).get("namespace") or "default"
        found: list[MountProblem] = []
        for ref in volume_refs(pod):
            if ref.kind == CLAIM:
                claim = await self._get(PERSISTENT_VOLUME_CLAIMS, ref.name, namespace)
                volume = None
                if claim is not None and _d(claim.get("status")).get("phase") == "Bound":
                    pv_name = _d(claim.get("spec")).get("volumeName")
                    if pv_name:
                        volume = await self._get(PERSISTENT_VOLUMES, pv_name, None)
                problem = claim_problem(namespace, ref.name, claim, volume)
                if problem:
                    found.append(MountProblem(ref.volume, problem, True))
                elif volume is not None:
                    unattached = await self._attach_problem(ref.volume, volume, pod)
                    if unattached is not None:
                        found.append(unattached)
            else:
                resource = CONFIGMAPS if ref.kind == CONFIG_MAP else SECRETS
                obj = None if ref.optional else await self._get(resource, ref.name, namespace)
                problem = source_problem(ref, obj)
                if problem:
                    found.append(MountProblem(ref.volume, problem, False))
        return found


    async def _attach_problem(self, ref_volume: str, volume: Obj,
                              pod: Obj) -> MountProblem | None:
        """Read what attached_problem needs (only for CSI volumes): the driver's CSIDriver
        (none: attach required) and the pod's Node."""
        driver = _d(_d(volume.get("spec")).get("csi")).get("driver")
        if not isinstance(driver, str) or not driver:
            return None
        csi_driver = await self._get(CSI_DRIVERS, driver, None)
        required = csi_driver is None or \
            _d(csi_driver.get("spec")).get("attachRequired") is not False
        if not required:
            return None
        node_name = _d(pod.get("spec")).get("nodeName") or ""
        node = await self._get(NODES, node_name, None) if node_name else None
        return attached_problem(ref_volume, volume, node, required)


class _Wait:
    __slots__ = ("pod", "done", "attempts", "step", "task")

    def __init__(self, pod: Callable[[], Obj], done: Callable[[], None]) -> None:
        self.pod = pod
        self.done = done
        self.attempts = 0
        self.step: Step | None = None
        self.task: asyncio.Task | None = None


class Mounter:
    """One node's pods waiting for their volumes; each attempt is a small task, each wait
    between attempts a timer on the node's Timers (so stop_node pauses the retries too)."""

    def __init__(self, reader: VolumeReader, timers: Timers,
                 event: Callable[[Obj, str, str, str], None]) -> None:
        self.reader = reader
        self.timers = timers
        self.event = event
        self.waiting: dict[str, _Wait] = {}

    def mount(self, key: str, pod: Callable[[], Obj], done: Callable[[], None]) -> None:
        """Mount `pod`'s volumes (re-reading the pod through `pod()` at each attempt); call
        `done()` on the node's timers once all are mounted. A second call replaces the first."""
        self.cancel(key)
        wait = self.waiting[key] = _Wait(pod, done)
        self._attempt(key, wait)

    def cancel(self, key: str) -> None:
        wait = self.waiting.pop(key, None)
        if wait is None:
            return
        self.timers.cancel(wait.step)
        if wait.task is not None:
            wait.task.cancel()

    def _attempt(self, key: str, wait: _Wait) -> None:
        wait.step = None
        if self.waiting.get(key) is not wait:
            return
        wait.task = asyncio.get_running_loop().create_task(self._check(key, wait))

    async def _check(self, key: str, wait: _Wait) -> None:
        pod = wait.pod()
        try:
            problems = await self.reader.problems(pod)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the API is unreachable: try again later
            log.warning("reading volume sources failed", pod=key, error=str(exc))
            problems = None
        wait.task = None
        if self.waiting.get(key) is not wait:
            return
        if problems == []:
            del self.waiting[key]
            self.timers.later(0.0, wait.done)
            return
        for message in mount_events(problems or []):
            self.event(pod, "Warning", FAILED_MOUNT, message)
        wait.step = self.timers.later(retry_delay(wait.attempts), self._attempt, key, wait)
        wait.attempts += 1
