"""Volume binding for claims whose class waits for the first consumer: which nodes can take the
pod, and what the scheduler writes before it binds the pod.

Kubernetes pieces: pkg/scheduler/framework/plugins/volumebinding (the VolumeBinding plugin's
Filter and PreBind) over pkg/controller/volume/scheduling's SchedulerVolumeBinder
(FindPodVolumes -> checkVolumeProvisions; AssumePodVolumes; BindPodVolumes), the v1.11+
successor of CheckVolumeBinding. A claim of a WaitForFirstConsumer class is not an error
while unbound (volume_listers.resolve_claim reports it as delayed): the pod fits a node when,
for each such claim, the class may provision there (its allowedTopologies admit the node's
labels; no terms admit every node) and, if the scheduler already chose a node for the claim
(`volume.kubernetes.io/selected-node`), it is that node. Before binding the pod the scheduler
writes the chosen node into the claims that lack it (`claims_to_annotate`), which is what makes
the claim binder hand the claim to its provisioner.

Not simulated: choosing among pre-existing (static) volumes for a delayed claim (the binder
only takes a volume pre-bound to the claim), storage capacity (CSIStorageCapacity) checks, and
PreBind's wait for the claims to be bound (the kubelet waits for them instead, with FailedMount
events, as it does for any unbound claim).
"""

from __future__ import annotations

from typing import Any

from ...api.storage import ANN_SELECTED_NODE, is_delayed, selected_node
from ...api.volume_helpers import storage_class_of
from ..nodetable import Mask, NodeTable
from .predicates_meta import Failure, PodMeta, compile_term
from .volume_listers import VolumeLister

Obj = dict[str, Any]

#: upstream volumebinding ErrReasonBindConflict
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"


def delayed_claim(lister: VolumeLister, namespace: str, name: str) -> tuple[Obj, Obj] | None:
    """(claim, class) when the claim exists, is unbound and its class waits for the first
    consumer; None otherwise."""
    claim = lister.claim(namespace, name)
    if claim is None or (claim.get("spec") or {}).get("volumeName"):
        return None
    storage_class = lister.storage_class(storage_class_of(claim))
    if not is_delayed(storage_class):
        return None
    assert storage_class is not None
    return claim, storage_class


def topology_mask(storage_class: Obj, nodes: NodeTable) -> Mask:
    """Rows whose labels some allowedTopologies term admits (every row without terms)."""
    terms = storage_class.get("allowedTopologies")
    if not isinstance(terms, list) or not terms:
        return nodes.everywhere()
    rows = nodes.everywhere(False)
    for term in terms:
        exprs = (term or {}).get("matchLabelExpressions") or []
        matcher = compile_term({"matchExpressions": [
            {"key": e.get("key"), "operator": "In", "values": e.get("values") or []}
            for e in exprs if isinstance(e, dict)]})
        if matcher is not None:
            rows |= matcher(nodes)
    return rows


def delayed_claim_failures(meta: PodMeta, lister: VolumeLister,
                           nodes: NodeTable) -> list[Failure]:
    """The VolumeBinding filter for the pod's delayed claims (empty when it has none)."""
    conflict: Mask | None = None
    for _volume, name, _read_only in meta.claims:
        found = delayed_claim(lister, meta.namespace, name)
        if found is None:
            continue
        claim, storage_class = found
        bad = ~topology_mask(storage_class, nodes)
        chosen = selected_node(claim)
        if chosen:
            bad |= nodes.name_id != nodes.strings.lookup(chosen)
        conflict = bad if conflict is None else conflict | bad
    return [] if conflict is None else [(ERR_BIND_CONFLICT, conflict)]


def claims_to_annotate(lister: VolumeLister, namespace: str, claims: list[str],
                       node: str) -> list[tuple[str, dict[str, Any]]]:
    """AssumePodVolumes for provisioning: (claim name, merge patch) for each delayed claim of
    the pod that has no selected node yet."""
    out = []
    for name in claims:
        found = delayed_claim(lister, namespace, name)
        if found is None or selected_node(found[0]):
            continue
        out.append((name, {"metadata": {"annotations": {ANN_SELECTED_NODE: node}}}))
    return out
