"""A keyed store of objects with secondary indexes.

Kubernetes v1.0 piece: pkg/client/cache/store.go and index.go (MetaNamespaceKeyFunc,
ThreadSafeStore, Indexer with IndexFuncs). Components keep their view of the cluster here,
filled by a Reflector, and look objects up by key or by an index (e.g. pods by node name).
Single event loop, so no locks; callers must not mutate the objects they read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

Obj = dict[str, Any]
IndexFunc = Callable[[Obj], list[str]]


def meta_namespace_key(obj: Obj) -> str:
    """`namespace/name`, or `name` for cluster-scoped objects (upstream's key format)."""
    md = obj.get("metadata") or {}
    ns = md.get("namespace")
    return f"{ns}/{md.get('name', '')}" if ns else md.get("name", "")


#: the index every namespaced lister needs (upstream cache.NamespaceIndex)
NAMESPACE_INDEX = "namespace"


def meta_namespace_index(obj: Obj) -> list[str]:
    """Objects by namespace (upstream MetaNamespaceIndexFunc); share this one function so
    informers shared between controllers get the index once."""
    ns = (obj.get("metadata") or {}).get("namespace")
    return [ns] if ns else []


class Indexer:
    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None) -> None:
        self.items: dict[str, Obj] = {}
        self.indexers = dict(indexers or {})
        self.indices: dict[str, dict[str, set[str]]] = {name: {} for name in self.indexers}

    def __len__(self) -> int:
        return len(self.items)

    def add_indexer(self, name: str, func: IndexFunc) -> None:
        """Add an index (upstream AddIndexers); objects already stored are indexed now."""
        if name in self.indexers:
            if self.indexers[name] is not func:
                raise ValueError(f"index {name!r} already exists with another function")
            return
        self.indexers[name] = func
        index: dict[str, set[str]] = {}
        self.indices[name] = index
        for key, obj in self.items.items():
            for value in func(obj):
                index.setdefault(value, set()).add(key)

    def get(self, key: str) -> Obj | None:
        return self.items.get(key)

    def list(self) -> list[Obj]:
        return list(self.items.values())

    def keys(self) -> list[str]:
        return list(self.items)

    def by_index(self, index: str, value: str) -> list[Obj]:
        return [self.items[k] for k in self.indices[index].get(value, ())]

    def add(self, obj: Obj) -> Obj | None:
        """Insert or replace; returns the previous object for that key."""
        key = meta_namespace_key(obj)
        old = self.items.get(key)
        if old is not None:
            self._unindex(key, old)
        self.items[key] = obj
        self._index(key, obj)
        return old

    update = add

    def delete(self, obj: Obj) -> Obj | None:
        return self.delete_key(meta_namespace_key(obj))

    def delete_key(self, key: str) -> Obj | None:
        """Remove by key (a DeletedFinalStateUnknown may carry no object); returns it."""
        old = self.items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def replace(self, objects: Iterable[Obj]) -> None:
        self.items = {}
        self.indices = {name: {} for name in self.indexers}
        for obj in objects:
            self.add(obj)

    def _index(self, key: str, obj: Obj) -> None:
        for name, func in self.indexers.items():
            index = self.indices[name]
            for value in func(obj):
                index.setdefault(value, set()).add(key)

    def _unindex(self, key: str, obj: Obj) -> None:
        for name, func in self.indexers.items():
            index = self.indices[name]
            for value in func(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
