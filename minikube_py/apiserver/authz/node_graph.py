"""Which objects a node may read: the relationships its pods establish, kept incrementally.

Kubernetes piece: plugin/pkg/auth/authorizer/node/graph.go (AddPod, DeletePod, AddPV,
DeletePV) with pkg/api/pod's VisitPodSecretNames / VisitPodConfigmapNames and
pkg/api/v1/persistentvolume's VisitPVSecretNames. Upstream keeps a directed graph —
secret/configmap/pvc/serviceaccount/resourceclaim -> pod -> node, secret -> pv -> pvc — and
walks it per check, with a "destination edge index" as a shortcut for vertices with many edges.
Every path the authorizer asks about is object -> pod -> node, or goes through a PV first, so
the walk is replaced by its result: for each object, a count per node of the bound pods that
reference it, plus the PV -> claim and secret -> PV maps. A check is a few dict lookups
whatever the number of pods; a pod event re-files that one pod (its old references are
released, its new ones counted). Pure: no I/O; the authorizer (node.py) feeds it from
informers.

As upstream: only pods with `spec.nodeName` count; a mirror pod (annotation
`kubernetes.io/config.mirror`) links only itself to its node, never what it references, so a
node cannot grant itself access by creating one; a generic ephemeral volume's claim is
`<pod>-<volume>`; a PV counts through its `spec.claimRef`, and so do the secrets its source
hands the kubelet.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

Obj = dict[str, Any]

SECRET = "secret"
CONFIGMAP = "configmap"
PVC = "persistentvolumeclaim"
PV = "persistentvolume"
VOLUME_ATTACHMENT = "volumeattachment"
SERVICEACCOUNT = "serviceaccount"
RESOURCECLAIM = "resourceclaim"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"

#: volume source -> where its secret's name sits (VisitPodSecretNames' volume cases)
_SECRET_VOLUMES = {"azureFile": ("secretName",), "cephfs": ("secretRef", "name"),
                   "cinder": ("secretRef", "name"), "flexVolume": ("secretRef", "name"),
                   "rbd": ("secretRef", "name"), "secret": ("secretName",),
                   "scaleIO": ("secretRef", "name"), "iscsi": ("secretRef", "name"),
                   "storageos": ("secretRef", "name"), "csi": ("nodePublishSecretRef", "name")}

#: (kind, name) of one object a pod references, in the pod's namespace
Ref = tuple[str, str]


def _dicts(value: Any) -> list[Obj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _get(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _containers(spec: Obj) -> Iterator[Obj]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        yield from _dicts(spec.get(field))


def pod_references(pod: Obj) -> set[Ref]:
    """What a bound pod makes readable to its node (graph.go's AddPod edges into the pod):
    secrets and configmaps it mounts, projects, pulls with or reads into env; its PVCs;
    its service account; its resource claims."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    refs: set[Ref] = set()

    def add(kind: str, name: Any) -> None:
        if isinstance(name, str) and name:
            refs.add((kind, name))

    add(SERVICEACCOUNT, spec.get("serviceAccountName"))
    for secret in _dicts(spec.get("imagePullSecrets")):
        add(SECRET, secret.get("name"))
    for container in _containers(spec):
        for source in _dicts(container.get("envFrom")):
            add(SECRET, _get(source, "secretRef", "name"))
            add(CONFIGMAP, _get(source, "configMapRef", "name"))
        for env in _dicts(container.get("env")):
            add(SECRET, _get(env, "valueFrom", "secretKeyRef", "name"))
            add(CONFIGMAP, _get(env, "valueFrom", "configMapKeyRef", "name"))
    pod_name = _get(pod, "metadata", "name")
    for volume in _dicts(spec.get("volumes")):
        for source, value in volume.items():
            path = _SECRET_VOLUMES.get(source)
            if path is not None:
                add(SECRET, _get(value, *path))
        add(CONFIGMAP, _get(volume, "configMap", "name"))
        for projection in _dicts(_get(volume, "projected", "sources")):
            add(SECRET, _get(projection, "secret", "name"))
            add(CONFIGMAP, _get(projection, "configMap", "name"))
        add(PVC, _get(volume, "persistentVolumeClaim", "claimName"))
        if isinstance(volume.get("ephemeral"), dict) and isinstance(pod_name, str):
            add(PVC, f"{pod_name}-{volume.get('name')}")  # ephemeral.VolumeClaimName
    generated = {s.get("name"): s.get("resourceClaimName")
                 for s in _dicts(_get(pod, "status", "resourceClaimStatuses"))}
    for claim in _dicts(spec.get("resourceClaims")):
        # resourceclaim.Name: the named claim, or the one generated from the template
        add(RESOURCECLAIM, claim.get("resourceClaimName") or generated.get(claim.get("name")))
    return refs


#: PV source -> where the name of the secret its kubelet reads sits, and whether the secret's
#: namespace defaults to the claim's (VisitPVSecretNames' kubelet-visible cases)
_PV_SECRETS: dict[str, tuple[tuple[tuple[str, ...], bool], ...]] = {
    "azureFile": ((("secretName",), True),),
    "cephfs": ((("secretRef",), True),), "flexVolume": ((("secretRef",), True),),
    "rbd": ((("secretRef",), True),), "scaleIO": ((("secretRef",), True),),
    "iscsi": ((("secretRef",), True),),
    "cinder": ((("secretRef",), False),), "storageos": ((("secretRef",), False),),
    "csi": ((("nodePublishSecretRef",), False), (("nodeStageSecretRef",), False),
            (("nodeExpandSecretRef",), False)),
}


def pv_secret_references(spec: Any, claim_namespace: str) -> Iterator[tuple[str, str]]:
    """(namespace, name) of each secret a PV's source hands the kubelet (upstream's
    VisitPVSecretNames with kubeletVisible; a CSI driver's controller secrets are not the
    kubelet's). A reference without a namespace is in the claim's namespace where upstream
    says so (azureFile's secretNamespace, the older SecretReference sources)."""
    if not isinstance(spec, dict):
        return
    for source, refs in _PV_SECRETS.items():
        volume = spec.get(source)
        if not isinstance(volume, dict):
            continue
        for path, claim_default in refs:
            if source == "azureFile":
                name, namespace = volume.get("secretName"), volume.get("secretNamespace")
            else:
                ref = _get(volume, *path)
                name, namespace = _get(ref, "name"), _get(ref, "namespace")
            if isinstance(name, str) and name:
                if not (isinstance(namespace, str) and namespace):
                    namespace = claim_namespace if claim_default else ""
                yield namespace, name


class NodeGraph:
    """reachable(node, kind, namespace, name): is the object reachable from `node`?"""

    def __init__(self) -> None:
        #: pod key -> (node, namespace, name, refs counted for it)
        self._pods: dict[str, tuple[str, str, str, frozenset[Ref]]] = {}
        #: pod key -> what its entry was computed from, as JSON bytes (a status update skips
        #: the walk; bytes, not the spec dict, so the graph holds ~1 KB per pod, not a spec)
        self._inputs: dict[str, bytes] = {}
        #: (kind, namespace, name) -> node -> how many of its bound pods reference it
        self._reach: dict[tuple[str, str, str], dict[str, int]] = {}
        #: pv name -> (namespace, name) of its claimRef
        self._pv_claims: dict[str, tuple[str, str]] = {}
        #: pv key -> pv name (so a deletion, which has no object, finds it)
        self._pv_names: dict[str, str] = {}
        #: (namespace, secret) -> names of the bound PVs whose kubelet-visible secret it is
        self._secret_pvs: dict[tuple[str, str], set[str]] = {}
        #: pv name -> the (namespace, secret) pairs filed for it
        self._pv_secrets: dict[str, tuple[tuple[str, str], ...]] = {}
        #: volume attachment key -> (its name, the node it attaches to)
        self._attachments: dict[str, tuple[str, str]] = {}
        #: volume attachment name -> its node
        self._attachment_nodes: dict[str, str] = {}

    # -- pods ---------------------------------------------------------------------------
    def set_pod(self, key: str, pod: Obj | None) -> None:
        """The pod stored at `key` is now `pod` (None: deleted). Unbound pods count for
        nothing; a pod whose node and references did not change costs one comparison."""
        inputs = _pod_inputs(pod) if pod is not None else None
        if inputs is not None and inputs == self._inputs.get(key):
            return  # e.g. a status update: nothing the references come from changed
        filed = self._pods.get(key)
        entry = _pod_entry(pod) if pod is not None else None
        if inputs is None:
            self._inputs.pop(key, None)
        else:
            self._inputs[key] = inputs
        if entry == filed:
            return
        if filed is not None:
            self._count(filed, -1)
            del self._pods[key]
        if entry is not None:
            self._pods[key] = entry
            self._count(entry, +1)

    def _count(self, entry: tuple[str, str, str, frozenset[Ref]], delta: int) -> None:
        node, namespace, _, refs = entry
        reach = self._reach
        for kind, ref_name in refs:
            vertex = (kind, namespace, ref_name)
            counts = reach.setdefault(vertex, {})
            total = counts.get(node, 0) + delta
            if total > 0:
                counts[node] = total
            else:
                counts.pop(node, None)
                if not counts:
                    del reach[vertex]

    # -- persistent volumes ---------------------------------------------------------------
    def set_pv(self, key: str, pv: Obj | None) -> None:
        """AddPV/DeletePV: a bound PV (one with a claimRef) is reachable from the nodes its
        claim is reachable from, and so are the secrets it hands the kubelet."""
        name = self._pv_names.pop(key, None)
        if name is not None:
            self._pv_claims.pop(name, None)
            for secret in self._pv_secrets.pop(name, ()):
                pvs = self._secret_pvs.get(secret)
                if pvs is not None:
                    pvs.discard(name)
                    if not pvs:
                        del self._secret_pvs[secret]
        if pv is None:
            return
        name = _get(pv, "metadata", "name")
        claim = _get(pv, "spec", "claimRef")
        if not isinstance(name, str):
            return
        self._pv_names[key] = name
        if not (isinstance(claim, dict) and isinstance(claim.get("name"), str)):
            return
        claim_namespace = str(claim.get("namespace") or "")
        self._pv_claims[name] = (claim_namespace, claim["name"])
        secrets = tuple(pv_secret_references(pv.get("spec"), claim_namespace))
        if secrets:
            self._pv_secrets[name] = secrets
            for secret in secrets:
                self._secret_pvs.setdefault(secret, set()).add(name)

    # -- volume attachments --------------------------------------------------------------
    def set_volume_attachment(self, key: str, attachment: Obj | None) -> None:
        """AddVolumeAttachment/DeleteVolumeAttachment: the edge attachment -> its node."""
        filed = self._attachments.pop(key, None)
        if filed is not None:
            self._attachment_nodes.pop(filed[0], None)
        name = _get(attachment, "metadata", "name") if attachment is not None else None
        node = _get(attachment, "spec", "nodeName") if attachment is not None else None
        if isinstance(name, str) and isinstance(node, str) and node:
            self._attachments[key] = (name, node)
            self._attachment_nodes[name] = node

    # -- queries ------------------------------------------------------------------------
    def reachable(self, node: str, kind: str, namespace: str, name: str) -> bool:
        if kind == VOLUME_ATTACHMENT:
            return self._attachment_nodes.get(name) == node
        if kind == PV:
            claim = self._pv_claims.get(name)
            return claim is not None and self.reachable(node, PVC, *claim)
        counts = self._reach.get((kind, namespace, name))
        if counts is not None and node in counts:
            return True
        if kind == SECRET:  # secret -> pv -> pvc -> pod -> node
            return any(self.reachable(node, PV, "", pv)
                       for pv in self._secret_pvs.get((namespace, name), ()))
        return False

    def pods_on(self, node: str) -> int:
        """How many bound pods the graph holds for `node` (tests, debugging)."""
        return sum(1 for entry in self._pods.values() if entry[0] == node)


def _pod_inputs(pod: Obj) -> bytes | None:
    """Everything _pod_entry reads — the spec, the identity, the mirror annotation and the
    generated resource-claim names — serialised, so equal bytes mean an unchanged entry (keys
    in another order only cost a recomputation). None when it does not serialise."""
    meta = pod.get("metadata") if isinstance(pod.get("metadata"), dict) else {}
    annotations = meta.get("annotations")
    try:
        return orjson.dumps((pod.get("spec"), meta.get("namespace"), meta.get("name"),
                             isinstance(annotations, dict) and MIRROR_ANNOTATION in annotations,
                             _get(pod, "status", "resourceClaimStatuses")))
    except TypeError:
        return None


def _pod_entry(pod: Obj) -> tuple[str, str, str, frozenset[Ref]] | None:
    node = _get(pod, "spec", "nodeName")
    namespace, name = _get(pod, "metadata", "namespace"), _get(pod, "metadata", "name")
    if not (isinstance(node, str) and node and isinstance(name, str)):
        return None
    annotations = _get(pod, "metadata", "annotations")
    mirror = isinstance(annotations, dict) and MIRROR_ANNOTATION in annotations
    refs = frozenset() if mirror else frozenset(pod_references(pod))
    return node, str(namespace or ""), name, refs
