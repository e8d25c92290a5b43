"""Listers: read an informer's cache the way a controller reads the API, without a request.

Kubernetes piece: client-go tools/cache/listers.go (GenericLister, GenericNamespaceLister,
ListAll, ListAllByNamespace) — what the generated `PodLister.Pods(ns).Get(name)` and
`List(selector)` are built on. A namespaced list uses the indexer's namespace index when the
informer has one (NAMESPACE_INDEX) and filters every object otherwise, as upstream; a missing
object is the API's NotFound, so code written against the client reads the same. The objects
are the cache's: never mutate them.
"""

from __future__ import annotations

from typing import Any

from ...api import errors
from ...api.labels import EVERYTHING, LabelSelector, parse_label_selector
from ..resources import Resource
from .store import NAMESPACE_INDEX, Indexer

Obj = dict[str, Any]
Selector = LabelSelector | str


def _selector(selector: Selector) -> LabelSelector:
    return parse_label_selector(selector) if isinstance(selector, str) else selector


def _labels(obj: Obj) -> Any:
    return (obj.get("metadata") or {}).get("labels")


def _select(objects: list[Obj], selector: LabelSelector) -> list[Obj]:
    if selector.empty():
        return objects
    matches = selector.matches
    return [o for o in objects if matches(_labels(o))]


class Lister:
    """Upstream GenericLister over an informer's indexer."""

    def __init__(self, indexer: Indexer, resource: Resource) -> None:
        self.indexer, self.resource = indexer, resource

    def list(self, selector: Selector = EVERYTHING) -> list[Obj]:
        """Every cached object whose labels match (all namespaces)."""
        return _select(self.indexer.list(), _selector(selector))

    def get(self, name: str) -> Obj:
        """A cluster-scoped object by name; NotFound (404) if not cached."""
        obj = self.indexer.get(name)
        if obj is None:
            raise errors.not_found(self.resource.plural, name, self.resource.group)
        return obj

    def by_namespace(self, namespace: str) -> NamespaceLister:
        return NamespaceLister(self.indexer, self.resource, namespace)


class NamespaceLister:
    """Upstream GenericNamespaceLister: reads within one namespace."""

    def __init__(self, indexer: Indexer, resource: Resource, namespace: str) -> None:
        self.indexer, self.resource, self.namespace = indexer, resource, namespace

    def list(self, selector: Selector = EVERYTHING) -> list[Obj]:
        ns = self.namespace
        if NAMESPACE_INDEX in self.indexer.indexers:
            objects = self.indexer.by_index(NAMESPACE_INDEX, ns)
        else:
            objects = [o for o in self.indexer.list()
                       if (o.get("metadata") or {}).get("namespace") == ns]
        return _select(objects, _selector(selector))

    def get(self, name: str) -> Obj:
        obj = self.indexer.get(f"{self.namespace}/{name}")
        if obj is None:
            raise errors.not_found(self.resource.plural, name, self.resource.group)
        return obj
