"""The garbage collector's dependency graph and its decisions, without I/O.

Kubernetes piece: pkg/controller/garbagecollector's graph.go (node: identity, owners,
dependents, beingDeleted, deletingDependents, virtual), graph_builder.go's
processGraphChanges / processTransitions / addUnblockedOwnersToDeleteQueue, and the decision
half of garbagecollector.go's attemptToDeleteItem (classify owners as solid, dangling or
waiting for dependents deletion; patch, delete with which policy, or leave alone).

The graph is fed by informer events of every watched resource and answers which uids must be
looked at: `attempt_to_delete` (a dependent that may have lost its owners, an owner waiting
for its dependents, a virtual owner to verify) and `attempt_to_orphan` (an owner deleted with
propagationPolicy Orphan). An owner referenced before it was observed is a *virtual* node;
verifying it against the API decides whether its dependents are orphans.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, NamedTuple

Obj = dict[str, Any]

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"


class Identity(NamedTuple):
    """upstream objectReference: OwnerReference fields + namespace."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str


@dataclass
class GraphNode:
    identity: Identity
    owners: list[Obj] = field(default_factory=list)
    dependents: set[str] = field(default_factory=set)
    observed: bool = True   # False: virtual, known only as somebody's owner
    being_deleted: bool = False
    deleting_dependents: bool = False


class Changes(NamedTuple):
    attempt_to_delete: list[str]
    attempt_to_orphan: list[str]


def identity_of(obj: Obj) -> Identity:
    md = obj.get("metadata") or {}
    return Identity(obj.get("apiVersion", ""), obj.get("kind", ""), md.get("namespace") or "",
                    md.get("name", ""), md.get("uid", ""))


def _finalizers(obj: Obj | None) -> list[str]:
    return list(((obj or {}).get("metadata") or {}).get("finalizers") or ())


def being_deleted(obj: Obj | None) -> bool:
    return bool(((obj or {}).get("metadata") or {}).get("deletionTimestamp"))


def deleting_with(obj: Obj | None, finalizer: str) -> bool:
    """Being deleted and holding this finalizer (waiting for the collector)."""
    return being_deleted(obj) and finalizer in _finalizers(obj)


def _blocks(ref: Obj) -> bool:
    return ref.get("blockOwnerDeletion") is True


def references_diffs(old: list[Obj], new: list[Obj]) -> tuple[list[Obj], list[Obj],
                                                              list[tuple[Obj, Obj]]]:
    """(added, removed, changed) owner references, matched by uid."""
    old_by_uid = {r.get("uid"): r for r in old}
    new_by_uid = {r.get("uid"): r for r in new}
    added = [r for u, r in new_by_uid.items() if u not in old_by_uid]
    removed = [r for u, r in old_by_uid.items() if u not in new_by_uid]
    changed = [(old_by_uid[u], r) for u, r in new_by_uid.items()
               if u in old_by_uid and old_by_uid[u] != r]
    return added, removed, changed


class DependencyGraph:
    def __init__(self) -> None:
        self.nodes: dict[str, GraphNode] = {}

    def __len__(self) -> int:
        return len(self.nodes)

    def get(self, uid: str) -> GraphNode | None:
        return self.nodes.get(uid)

    # -- events --------------------------------------------------------------------------
    def upsert(self, obj: Obj, old: Obj | None = None) -> Changes:
        """An add (old None) or update event (upstream processGraphChanges)."""
        changes = Changes([], [])
        identity = identity_of(obj)
        refs = list((obj.get("metadata") or {}).get("ownerReferences") or ())
        node = self.nodes.get(identity.uid)
        if node is None:
            node = GraphNode(identity, owners=refs, being_deleted=being_deleted(obj),
                             deleting_dependents=deleting_with(obj, FOREGROUND))
            self.nodes[identity.uid] = node
            self._add_to_owners(node, refs, changes)
        else:
            if not node.observed:
                node.observed = True
                node.identity = identity
            added, removed, changed = references_diffs(node.owners, refs)
            if added or removed or changed:
                unblocked = [r for r in removed if _blocks(r)]
                unblocked += [new for old_ref, new in changed
                              if _blocks(old_ref) and not _blocks(new)]
                for ref in unblocked:
                    if ref.get("uid") in self.nodes:
                        changes.attempt_to_delete.append(ref["uid"])
                node.owners = refs
                self._add_to_owners(node, added, changes)
                for ref in removed:
                    owner = self.nodes.get(ref.get("uid", ""))
                    if owner is not None:
                        owner.dependents.discard(identity.uid)
            if being_deleted(obj):
                node.being_deleted = True
        self._transitions(old, obj, node, changes)
        return changes

    def remove(self, obj: Obj) -> Changes:
        """A delete event: dependents may be orphans now; owners waiting for their dependents
        may be done."""
        return self._remove(identity_of(obj).uid)

    def remove_virtual(self, uid: str) -> Changes:
        """A virtual owner turned out not to exist (upstream's virtual delete event)."""
        node = self.nodes.get(uid)
        if node is None or node.observed:
            return Changes([], [])
        return self._remove(uid)

    def _remove(self, uid: str) -> Changes:
        changes = Changes([], [])
        node = self.nodes.pop(uid, None)
        if node is None:
            return changes
        changes.attempt_to_delete.extend(node.dependents)
        for ref in node.owners:
            owner = self.nodes.get(ref.get("uid", ""))
            if owner is None:
                continue
            owner.dependents.discard(uid)
            if owner.deleting_dependents:
                changes.attempt_to_delete.append(owner.identity.uid)
        return changes

    def _add_to_owners(self, node: GraphNode, refs: list[Obj], changes: Changes) -> None:
        for ref in refs:
            uid = ref.get("uid", "")
            owner = self.nodes.get(uid)
            if owner is None:
                owner = GraphNode(Identity(ref.get("apiVersion", ""), ref.get("kind", ""),
                                           node.identity.namespace, ref.get("name", ""), uid),
                                  observed=False)
                self.nodes[uid] = owner
                changes.attempt_to_delete.append(uid)  # verify the virtual owner exists
            owner.dependents.add(node.identity.uid)

    def _transitions(self, old: Obj | None, new: Obj, node: GraphNode, changes: Changes) -> None:
        """upstream processTransitions: an owner that just started waiting for orphaning or
        for its dependents' deletion."""
        if deleting_with(new, ORPHAN) and not deleting_with(old, ORPHAN):
            changes.attempt_to_orphan.append(node.identity.uid)
            return
        if deleting_with(new, FOREGROUND) and not deleting_with(old, FOREGROUND):
            node.deleting_dependents = True
            changes.attempt_to_delete.extend(node.dependents)
            changes.attempt_to_delete.append(node.identity.uid)

    # -- queries -------------------------------------------------------------------------
    def blocking_dependents(self, uid: str) -> list[GraphNode]:
        """Dependents whose reference to `uid` has blockOwnerDeletion=true."""
        node = self.nodes.get(uid)
        if node is None:
            return []
        out = []
        for dep_uid in node.dependents:
            dep = self.nodes.get(dep_uid)
            if dep is not None and any(r.get("uid") == uid and _blocks(r) for r in dep.owners):
                out.append(dep)
        return out


# -- attemptToDeleteItem's decision ----------------------------------------------------------
class OwnerState(enum.Enum):
    SOLID = "solid"        # exists, not waiting for its dependents
    DANGLING = "dangling"  # absent (404, or the name now belongs to another uid)
    WAITING = "waiting"    # being deleted in the foreground


def owner_state(owner: Obj | None, uid: str) -> OwnerState:
    """Classify an owner from a live GET (None: 404)."""
    if owner is None or (owner.get("metadata") or {}).get("uid") != uid:
        return OwnerState.DANGLING
    if deleting_with(owner, FOREGROUND):
        return OwnerState.WAITING
    return OwnerState.SOLID


class Plan(NamedTuple):
    action: str                        # "none" | "patch" | "delete"
    policy: str | None = None          # propagationPolicy of a delete
    owner_references: list[Obj] | None = None  # the references to keep, for a patch
    unblock: bool = False              # make the references non-blocking before the delete


def plan_attempt_to_delete(refs: list[Obj], states: dict[str, OwnerState],
                           has_dependents: bool, finalizers: list[str],
                           dependent_waiting: bool = False) -> Plan:
    """upstream attemptToDeleteItem's switch:
    - some owner solid: drop the references to dangling and waiting owners (if any);
    - no solid owner, some waiting, and the item has dependents of its own: delete it in the
      foreground too, so the wait propagates down. When one of those dependents is itself
      waiting for its dependents (`dependent_waiting`), the item may sit in a cycle of
      owners all waiting for each other: its references are first made non-blocking, so the
      owner it blocks stops waiting (upstream's cycle detection, false positives included);
    - otherwise (all owners gone or waiting): delete it, honouring a deletion already asked
      for with orphan/foreground finalizers, else in the background."""
    solid = [r for r in refs if states.get(r.get("uid", "")) is OwnerState.SOLID]
    gone = {r.get("uid") for r in refs
            if states.get(r.get("uid", "")) in (OwnerState.DANGLING, OwnerState.WAITING)}
    waiting = [r for r in refs if states.get(r.get("uid", "")) is OwnerState.WAITING]
    if solid:
        if not gone:
            return Plan("none")
        return Plan("patch", owner_references=[r for r in refs if r.get("uid") not in gone])
    if waiting and has_dependents:
        return Plan("delete", "Foreground", unblock=dependent_waiting)
    if ORPHAN in finalizers:
        return Plan("delete", "Orphan")
    if FOREGROUND in finalizers:
        return Plan("delete", "Foreground")
    return Plan("delete", "Background")


def unblocked(refs: list[Obj]) -> list[Obj]:
    """upstream unblockOwnerReferences: every blocking reference made non-blocking."""
    return [{**r, "blockOwnerDeletion": False} if _blocks(r) else r for r in refs]
