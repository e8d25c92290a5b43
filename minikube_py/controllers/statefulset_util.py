"""The StatefulSet controller's pure pieces: identities, storage, revisions, status.

Kubernetes pieces: pkg/controller/statefulset/stateful_set_utils.go (getParentNameAndOrdinal,
getPodName, getPersistentVolumeClaimName, identityMatches, storageMatches, updateIdentity,
updateStorage, newStatefulSetPod, newVersionedStatefulSetPod, getPersistentVolumeClaims,
ApplyRevision, isRunningAndReady, isHealthy, getStartOrdinal, the claim-owner rules of the
PersistentVolumeClaim retention policy) and stateful_set_control.go's computeReplicaStatus and
completeRollingUpdate.

Why pure: a StatefulSet's pods are named, not counted, so most of the controller is deciding
which ordinal a pod has, what it should look like and whether it is healthy yet — questions
with answers that depend on the objects alone.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from .conditions import is_pod_ready
from .controller_utils import controller_ref, is_pod_available, pod_from_template
from .history import REVISION_HASH_LABEL

Obj = dict[str, Any]

API_VERSION, KIND = "apps/v1", "StatefulSet"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
_ORDINAL = re.compile(r"(.*)-([0-9]+)$")


def parent_and_ordinal(pod: Obj) -> tuple[str, int]:
    """getParentNameAndOrdinal: (`web`, 1) for `web-1`; ("", -1) for no ordinal."""
    match = _ORDINAL.match((pod.get("metadata") or {}).get("name", ""))
    if match is None:
        return "", -1
    return match.group(1), int(match.group(2))


def ordinal_of(pod: Obj) -> int:
    return parent_and_ordinal(pod)[1]


def is_member_of(sts: Obj, pod: Obj) -> bool:
    return parent_and_ordinal(pod)[0] == sts["metadata"]["name"]


def start_ordinal(sts: Obj) -> int:
    ordinals = (sts.get("spec") or {}).get("ordinals") or {}
    return int(ordinals.get("start") or 0)


def replicas_of(sts: Obj) -> int:
    value = (sts.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def pod_name(sts: Obj, ordinal: int) -> str:
    return f"{sts['metadata']['name']}-{ordinal}"


def claim_name(sts: Obj, template: Obj, ordinal: int) -> str:
    """getPersistentVolumeClaimName: `<template>-<set>-<ordinal>`."""
    return f"{(template.get('metadata') or {}).get('name', '')}-{pod_name(sts, ordinal)}"


def revision_of(pod: Obj) -> str:
    return ((pod.get("metadata") or {}).get("labels") or {}).get(REVISION_HASH_LABEL, "")


# ---------------------------------------------------------------------------------------------
# Pod states


def is_created(pod: Obj | None) -> bool:
    return bool(pod and (pod.get("status") or {}).get("phase"))


def is_terminating(pod: Obj) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def is_failed(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Failed"


def is_succeeded(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Succeeded"


def is_running_and_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_pod_ready(pod)


def is_running_and_available(pod: Obj, min_ready: int, now: float) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_pod_available(
        pod, min_ready, now)


def is_healthy(pod: Obj, min_ready: int, now: float) -> bool:
    return is_running_and_available(pod, min_ready, now) and not is_terminating(pod)


# ---------------------------------------------------------------------------------------------
# The pod and claims of an ordinal


def claim_templates(sts: Obj) -> list[Obj]:
    return [t for t in (sts.get("spec") or {}).get("volumeClaimTemplates") or ()
            if isinstance(t, dict)]


def claims_for(sts: Obj, ordinal: int) -> dict[str, Obj]:
    """getPersistentVolumeClaims: template name -> the claim the ordinal's pod mounts, labelled
    with the set's matchLabels (and without the template's status)."""
    selector_labels = ((sts.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    claims = {}
    for template in claim_templates(sts):
        claim = copy.deepcopy(template)
        claim.pop("status", None)
        md = claim.setdefault("metadata", {})
        md["name"] = claim_name(sts, template, ordinal)
        md["namespace"] = sts["metadata"]["namespace"]
        md["labels"] = {**(md.get("labels") or {}), **selector_labels}
        claim["apiVersion"], claim["kind"] = "v1", "PersistentVolumeClaim"
        claims[(template.get("metadata") or {}).get("name", "")] = claim
    return claims


def _update_storage(sts: Obj, pod: Obj, ordinal: int) -> None:
    """updateStorage: each claim template replaces the template's volume of the same name
    with the ordinal's claim."""
    claims = claims_for(sts, ordinal)
    spec = pod.setdefault("spec", {})
    volumes = [v for v in spec.get("volumes") or () if v.get("name") not in claims]
    for name, claim in claims.items():
        volumes.append({"name": name, "persistentVolumeClaim": {
            "claimName": claim["metadata"]["name"]}})
    if volumes:
        spec["volumes"] = volumes


def _update_identity(sts: Obj, pod: Obj, ordinal: int) -> None:
    """updateIdentity: the stable name, the pod-name and pod-index labels, hostname and
    subdomain (the governing Service)."""
    md = pod.setdefault("metadata", {})
    md["name"] = pod_name(sts, ordinal)
    md["namespace"] = sts["metadata"]["namespace"]
    md.pop("generateName", None)
    labels = md.setdefault("labels", {})
    labels[POD_NAME_LABEL] = md["name"]
    labels[POD_INDEX_LABEL] = str(ordinal)
    spec = pod.setdefault("spec", {})
    spec["hostname"] = md["name"]
    service = (sts.get("spec") or {}).get("serviceName")
    if service:
        spec["subdomain"] = service


def identity_label_patch(sts: Obj, pod: Obj) -> dict[str, str] | None:
    """identityMatches, for what an update can still change: the pod-name and pod-index
    labels an adopted or hand-edited pod lacks (None when they are right)."""
    _, ordinal = parent_and_ordinal(pod)
    name = (pod.get("metadata") or {}).get("name", "")
    labels = (pod.get("metadata") or {}).get("labels") or {}
    wanted = {POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal)}
    missing = {k: v for k, v in wanted.items() if labels.get(k) != v}
    return missing or None


def new_pod(sts: Obj, ordinal: int, revision: str) -> Obj:
    """newStatefulSetPod + setPodRevision."""
    template = (sts.get("spec") or {}).get("template") or {}
    pod = pod_from_template(template, sts, controller_ref(sts, API_VERSION, KIND))
    _update_identity(sts, pod, ordinal)
    _update_storage(sts, pod, ordinal)
    pod["metadata"]["labels"][REVISION_HASH_LABEL] = revision
    return pod


def apply_revision(sts: Obj, revision: Obj) -> Obj:
    """ApplyRevision: the set with the revision's template (its data replaces spec.template)."""
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return {**sts, "spec": {**(sts.get("spec") or {}), "template": template}}


def versioned_pod(current_set: Obj, update_set: Obj, current_rev: str, update_rev: str,
                  ordinal: int) -> Obj:
    """newVersionedStatefulSetPod: ordinals below the partition keep the current revision."""
    strategy = (current_set.get("spec") or {}).get("updateStrategy") or {}
    if strategy.get("type") == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        current_replicas = int((current_set.get("status") or {}).get("currentReplicas") or 0)
        partition = int((rolling or {}).get("partition") or 0)
        if ((rolling is None and ordinal < current_replicas)
                or (rolling is not None and ordinal < start_ordinal(current_set) + partition)):
            return new_pod(current_set, ordinal, current_rev)
    return new_pod(update_set, ordinal, update_rev)


# ---------------------------------------------------------------------------------------------
# Claim owners under the retention policy


def is_condemned(sts: Obj, ordinal: int) -> bool:
    start = start_ordinal(sts)
    return ordinal < start or ordinal >= start + replicas_of(sts)


def wanted_claim_owners(sts: Obj, pod: Obj | None, ordinal: int) -> list[Obj]:
    """claimOwnerMatchesSetAndPod as owner references: WhenDeleted=Delete makes the set an
    owner; WhenScaled=Delete makes the pod the owner once its ordinal is condemned."""
    policy = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    owners = []
    condemned = is_condemned(sts, ordinal)
    if policy.get("whenScaled") == "Delete" and condemned and pod is not None:
        pmd = pod["metadata"]
        owners.append({"apiVersion": "v1", "kind": "Pod", "name": pmd["name"],
                       "uid": pmd.get("uid", "")})
    elif policy.get("whenDeleted") == "Delete":
        md = sts["metadata"]
        owners.append({"apiVersion": API_VERSION, "kind": KIND, "name": md["name"],
                       "uid": md.get("uid", "")})
    return owners


def claim_owner_patch(claim: Obj, wanted: list[Obj], managed_uids: set[str]) -> list[Obj] | None:
    """The claim's new ownerReferences (refs to others kept), None when already right."""
    refs = (claim.get("metadata") or {}).get("ownerReferences") or []
    kept = [r for r in refs if r.get("uid") not in managed_uids]
    result = kept + wanted
    if {r.get("uid") for r in refs} == {r.get("uid") for r in result}:
        return None
    return result


# ---------------------------------------------------------------------------------------------
# Status


def replica_status(pods: list[Obj], current_rev: str, update_rev: str, min_ready: int,
                   now: float) -> Obj:
    """computeReplicaStatus."""
    replicas = ready = available = current = updated = 0
    for pod in pods:
        if not is_created(pod):
            continue
        replicas += 1
        if is_running_and_ready(pod):
            ready += 1
            if is_running_and_available(pod, min_ready, now):
                available += 1
        if not is_terminating(pod):
            revision = revision_of(pod)
            if revision == current_rev:
                current += 1
            if revision == update_rev:
                updated += 1
    return {"replicas": replicas, "readyReplicas": ready, "availableReplicas": available,
            "currentReplicas": current, "updatedReplicas": updated}


def complete_rolling_update(sts: Obj, status: Obj) -> None:
    """completeRollingUpdate: once every pod is updated and ready, update becomes current."""
    strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
    if (strategy.get("type") == "RollingUpdate"
            and status.get("updatedReplicas") == status.get("replicas")
            and status.get("readyReplicas") == status.get("replicas")):
        status["currentReplicas"] = status["updatedReplicas"]
        status["currentRevision"] = status["updateRevision"]
