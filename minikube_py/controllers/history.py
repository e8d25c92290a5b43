"""ControllerRevisions: the template history of DaemonSets and StatefulSets.

Kubernetes piece: pkg/controller/history/controller_history.go (NewControllerRevision,
HashControllerRevision, ControllerRevisionName, EqualRevision, FindEqualRevisions,
SortControllerRevisions, realHistory.CreateControllerRevision with its collision loop) and the
`getPatch` both controllers share (daemon/update.go, statefulset/stateful_set_utils.go): a
revision's `data` is a strategic-merge patch that replaces `spec.template`, which is exactly
what `kubectl rollout undo` sends back to the owner.

Why the pure/I-O split: which revision is current, which to prune and what the next revision
number is are decisions over lists (tested alone); creating one is a call with a retry on a name
collision.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import orjson

from ..api.errors import StatusError
from ..client import Client
from ..client.errors import is_already_exists
from ..client.resources import CONTROLLER_REVISIONS
from .deployment_util import fnv32a, safe_encode_string

Obj = dict[str, Any]

#: history.ControllerRevisionHashLabel: the hash a revision's name ends with
HASH_LABEL = "controller.kubernetes.io/hash"
#: apps.ControllerRevisionHashLabelKey: on pods (and DaemonSet revisions), which revision made them
REVISION_HASH_LABEL = "controller-revision-hash"
_MAX_PREFIX = 223  # ControllerRevisionName truncates the parent's name to keep 253 characters


def template_patch(owner: Obj) -> Obj:
    """getPatch: `{"spec": {"template": {..., "$patch": "replace"}}}` of the owner."""
    template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def hash_revision(data: Obj, collision_count: int | None) -> str:
    """HashControllerRevision: FNV-32a of the data, then the collision count."""
    raw = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    if collision_count is not None:
        raw += (collision_count & 0xFFFFFFFF).to_bytes(4, "little")
    return safe_encode_string(str(fnv32a(raw)))


def revision_name(prefix: str, hash_: str) -> str:
    return f"{prefix[:_MAX_PREFIX]}-{hash_}"


def new_revision(owner: Obj, ref: Obj, template_labels: dict[str, str] | None, data: Obj,
                 revision: int, collision_count: int | None) -> Obj:
    """NewControllerRevision: template labels plus the hash label, owned by `ref`."""
    hash_ = hash_revision(data, collision_count)
    md = owner.get("metadata") or {}
    return {
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": revision_name(md.get("name", ""), hash_),
                     "namespace": md.get("namespace"),
                     "labels": {**(template_labels or {}), HASH_LABEL: hash_},
                     "ownerReferences": [ref]},
        "data": data, "revision": revision,
    }


def revision_number(revision: Obj) -> int:
    try:
        return int(revision.get("revision") or 0)
    except (TypeError, ValueError):
        return 0


def sort_revisions(revisions: Iterable[Obj]) -> list[Obj]:
    """SortControllerRevisions: by revision, then creation time, then name."""
    return sorted(revisions, key=lambda r: (revision_number(r),
                                            (r.get("metadata") or {}).get("creationTimestamp") or "",
                                            (r.get("metadata") or {}).get("name", "")))


def next_revision(revisions: list[Obj]) -> int:
    """One more than the highest revision (1 for none)."""
    return max((revision_number(r) for r in revisions), default=0) + 1


def equal_revision(a: Obj, b: Obj) -> bool:
    """EqualRevision: same hash label (when both have one) and the same data."""
    ha = ((a.get("metadata") or {}).get("labels") or {}).get(HASH_LABEL)
    hb = ((b.get("metadata") or {}).get("labels") or {}).get(HASH_LABEL)
    if ha and hb and ha != hb:
        return False
    return a.get("data") == b.get("data")


def find_equal_revisions(revisions: Iterable[Obj], needle: Obj) -> list[Obj]:
    return [r for r in revisions if equal_revision(r, needle)]


class RevisionControl:
    """Creates, renumbers and deletes revisions through the API (realHistory)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def create(self, revision: Obj, collision_count: int) -> tuple[Obj, int]:
        """CreateControllerRevision: on a name taken by a different revision, bump the
        collision count and try the next name. Returns (revision, collision count used)."""
        namespace = revision["metadata"]["namespace"]
        while True:
            clone = copy.deepcopy(revision)
            hash_ = hash_revision(clone["data"], collision_count)
            clone["metadata"]["name"] = revision_name(
                revision["metadata"]["ownerReferences"][0]["name"], hash_)
            clone["metadata"]["labels"][HASH_LABEL] = hash_
            try:
                return await self.client.create(CONTROLLER_REVISIONS, clone, namespace), \
                    collision_count
            except StatusError as exc:
                if not is_already_exists(exc):
                    raise
            existing = await self.client.get(CONTROLLER_REVISIONS, clone["metadata"]["name"],
                                             namespace)
            if equal_revision(existing, clone):
                return existing, collision_count
            collision_count += 1

    async def set_revision(self, revision: Obj, number: int) -> Obj:
        """UpdateControllerRevision: renumber (a rollback makes an old revision current)."""
        if revision_number(revision) == number:
            return revision
        body = {**revision, "revision": number}
        return await self.client.update(CONTROLLER_REVISIONS, body)

    async def delete(self, revision: Obj) -> None:
        md = revision["metadata"]
        await self.client.delete(CONTROLLER_REVISIONS, md["name"], md.get("namespace"))
