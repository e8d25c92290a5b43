"""Volume binding for claims whose class waits for the first consumer: which nodes can take the
pod, and what the scheduler writes before it binds the pod.

Kubernetes pieces: pkg/scheduler/framework/plugins/volumebinding (the VolumeBinding plugin's
Filter and PreBind) over pkg/controller/volume/scheduling's SchedulerVolumeBinder
(FindPodVolumes -> findMatchingVolumes, checkVolumeProvisions; AssumePodVolumes;
BindPodVolumes), the v1.11+ successor of CheckVolumeBinding. A claim of a WaitForFirstConsumer
class is not an error while unbound (volume_listers.resolve_claim reports it as delayed): the
pod fits a node when, for each such claim, either an existing volume matches it there
(api/volume_matching.find_best_match with the node: its nodeAffinity admits the node — how
local volumes are placed) or the class may provision there (a provisioner other than
`kubernetes.io/no-provisioner`, and its allowedTopologies admit the node's labels; no terms
admit every node); once a node was selected for the claim (`volume.kubernetes.io/selected-node`)
only that node. Before binding the pod, `bind_plan` says what to write: a matched volume is
pre-bound to the claim (its claimRef, as GetBindVolumeToClaim; the claim binder completes the
binding), otherwise the claim gets the chosen node, which hands it to its provisioner.

Not simulated: storage capacity (CSIStorageCapacity) checks, and PreBind's wait for the claims
to be bound (the kubelet waits for them instead, with FailedMount events, as for any unbound
claim); if provisioning fails the pod is not rescheduled.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

from ...api.storage import ANN_SELECTED_NODE, is_delayed, provisioner_of, selected_node
from ...api.volume_helpers import storage_class_of
from ...api.volume_matching import (
    check_access_modes,
    claim_reference,
    find_best_match,
    find_matching_volume,
)
from ..nodetable import Mask, NodeTable
from .predicates_meta import Failure, PodMeta, compile_term
from .volume_listers import VolumeLister

Obj = dict[str, Any]

#: upstream volumebinding ErrReasonBindConflict
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
#: the provisioner name of classes for pre-made (local) volumes only
NO_PROVISIONER = "kubernetes.io/no-provisioner"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"


class Write(NamedTuple):
    """One write of the volume binding step: a merge patch of a claim, or a volume's update."""

    kind: str  # "claim" | "volume"
    name: str
    body: Obj


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


def _selector_mask(selector: Any, nodes: NodeTable, *, topology: bool = False) -> Mask:
    """Rows some term of `selector` admits: a NodeSelector's nodeSelectorTerms, or a class's
    allowedTopologies (lists of matchLabelExpressions, each an In)."""
    terms = selector if topology else (selector or {}).get("nodeSelectorTerms")
    rows = nodes.everywhere(False)
    for term in terms if isinstance(terms, list) else ():
        if topology:
            term = {"matchExpressions": [
                {"key": e.get("key"), "operator": "In", "values": e.get("values") or []}
                for e in (term or {}).get("matchLabelExpressions") or [] if isinstance(e, dict)]}
        matcher = compile_term(term) if isinstance(term, dict) else None
        if matcher is not None:
            rows |= matcher(nodes)
    return rows


def topology_mask(storage_class: Obj, nodes: NodeTable) -> Mask:
    """Rows whose labels some allowedTopologies term admits (every row without terms)."""
    terms = storage_class.get("allowedTopologies")
    if not isinstance(terms, list) or not terms:
        return nodes.everywhere()
    return _selector_mask(terms, nodes, topology=True)


def _affinity_mask(volume: Obj, nodes: NodeTable) -> Mask:
    required = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    return nodes.everywhere() if required is None else _selector_mask(required, nodes)


def static_mask(claim: Obj, volumes: list[Obj], nodes: NodeTable) -> Mask:
    """Rows where some existing volume can serve the claim (findMatchingVolumes): a volume
    pre-bound to the claim decides alone; otherwise each volume that matches but for the node
    adds the rows its nodeAffinity admits."""
    prebound = find_matching_volume(claim, volumes)
    if prebound is not None and (prebound.get("spec") or {}).get("claimRef"):
        return _affinity_mask(prebound, nodes)
    rows = nodes.everywhere(False)
    for volume in volumes:
        if find_matching_volume(claim, [volume]) is volume and check_access_modes(claim, volume):
            rows |= _affinity_mask(volume, nodes)
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
        fits = static_mask(claim, lister.volumes(), nodes)
        if provisioner_of(storage_class) != NO_PROVISIONER:
            fits |= topology_mask(storage_class, nodes)
        chosen = selected_node(claim)
        if chosen:
            fits &= nodes.name_id == nodes.strings.lookup(chosen)
        conflict = ~fits if conflict is None else conflict | ~fits
    return [] if conflict is None else [(ERR_BIND_CONFLICT, conflict)]


def bind_plan(lister: VolumeLister, namespace: str, claims: list[str],
              node: Obj) -> list[Write]:
    """AssumePodVolumes + BindPodVolumes for the pod's delayed claims on `node`: a volume that
    matches there is pre-bound to its claim (the smallest, as the claim binder would pick;
    one volume per claim), else the claim is given the node (unless it has one already)."""
    writes: list[Write] = []
    taken: set[str] = set()
    node_name = (node.get("metadata") or {}).get("name", "")
    for name in claims:
        found = delayed_claim(lister, namespace, name)
        if found is None:
            continue
        claim = found[0]
        candidates = [v for v in lister.volumes()
                      if (v.get("metadata") or {}).get("name") not in taken]
        volume = find_best_match(claim, candidates, True, node)
        if volume is not None:
            if (volume.get("spec") or {}).get("claimRef"):
                continue  # pre-bound already: the claim binder finishes it
            taken.add(volume["metadata"]["name"])
            bound = copy.deepcopy(volume)
            bound["spec"]["claimRef"] = claim_reference(claim)
            notes = bound["metadata"].setdefault("annotations", {})
            notes[ANN_BOUND_BY_CONTROLLER] = "yes"
            writes.append(Write("volume", volume["metadata"]["name"], bound))
        elif not selected_node(claim):
            writes.append(Write("claim", name, {"metadata": {"annotations": {
                ANN_SELECTED_NODE: node_name}}}))
    return writes
