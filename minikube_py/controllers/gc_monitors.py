"""Which resources the garbage collector watches, decided from discovery, without I/O.

Kubernetes piece: pkg/controller/garbagecollector — `GetDeletableResources` (every resource
discovery lists with the verbs delete, list and watch), the controller manager's default
`gcIgnoredResources` (events, in both groups), and `GraphBuilder.syncMonitors` (start a
monitor for each new resource, stop the ones whose resource is gone). Upstream re-reads
discovery every 30 s (`GarbageCollector.Sync`), so an owner of a kind added by a CRD is
watched — and its dependents collected when it goes — without restarting anything; kopf's
walkthrough relies on exactly that (`kopf.adopt` makes a PersistentVolumeClaim the dependent
of an EphemeralVolumeClaim).

The monitors keep what the graph needs and nothing else (upstream's metadata-only informers,
PartialObjectMetadata): apiVersion, kind and metadata without managedFields.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from ..client.resources import Resource
from .discovery import APIResource, with_verbs

Obj = dict[str, Any]

#: upstream's default gcIgnoredResources: events are never owners worth a watch
IGNORED = frozenset({("", "events"), ("events.k8s.io", "events")})


class MonitorChanges(NamedTuple):
    start: list[Resource]
    stop: list[Resource]


def deletable_resources(found: Iterable[APIResource]) -> set[Resource]:
    """upstream GetDeletableResources minus the ignored resources."""
    return {r.resource for r in with_verbs(list(found), "delete", "list", "watch")
            if (r.resource.group, r.resource.plural) not in IGNORED}


def plan_monitors(running: Iterable[Resource], wanted: set[Resource],
                  fixed: Iterable[Resource] = ()) -> MonitorChanges:
    """What to start and stop so that `wanted` (discovery's preferred version of each
    resource) is watched besides the `fixed` monitors, which are never stopped and cover
    their resource in any version. A running monitor of another version than the wanted one
    (the CRD's preferred version changed, the old one may not be served) is replaced."""
    fixed_keys = {_key(r) for r in fixed}
    running = list(running)
    stop = [r for r in running if r not in wanted and _key(r) not in fixed_keys]
    kept_keys = {_key(r) for r in running if r not in stop} | fixed_keys
    start = sorted((r for r in wanted if _key(r) not in kept_keys), key=_key)
    return MonitorChanges(start, stop)


def unwatched_owner_kinds(obj: Obj, watched_kinds: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (group, kind)s of `obj`'s owners that no monitor watches (discovery is worth
    reading again now for them, rather than at the next periodic sync)."""
    kinds = {((ref.get("apiVersion") or "").rpartition("/")[0], ref.get("kind") or "")
             for ref in (obj.get("metadata") or {}).get("ownerReferences") or ()}
    return kinds - watched_kinds


def metadata_only(resource: Resource):
    """An informer transform keeping what the graph reads (upstream's metadata informer);
    apiVersion and kind come from the resource when a list item lacks them."""
    def transform(obj: Obj) -> Obj:
        md = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
        return {"apiVersion": obj.get("apiVersion") or resource.api_version,
                "kind": obj.get("kind") or resource.kind, "metadata": md}
    return transform


def _key(resource: Resource) -> tuple[str, str]:
    return resource.group, resource.plural
