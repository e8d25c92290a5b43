"""A binary heap keyed by name, ordered by a `less` function, with update and delete by key.

Kubernetes piece: pkg/scheduler/internal/heap/heap.go (1.31). The scheduling queue's activeQ is
ordered by the profile's QueueSort `Less(a, b)` and its backoffQ by backoff expiry; both must
update or remove one pod by its key (an updated or deleted pod) without a linear scan, which
`heapq` cannot do. So, as upstream, every item remembers its index and `add`/`delete` sift it
into place in O(log n).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class KeyedHeap(Generic[T]):
    """Items by `key(item)`, the `less`-smallest first."""

    def __init__(self, key: Callable[[T], str], less: Callable[[T, T], bool]) -> None:
        self._key = key
        self._less = less
        self._items: list[T] = []
        self._index: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[T]:
        """Items in no particular order (upstream List)."""
        return iter(list(self._items))

    def get(self, key: str) -> T | None:
        at = self._index.get(key)
        return None if at is None else self._items[at]

    def peek(self) -> T | None:
        return self._items[0] if self._items else None

    def add(self, item: T) -> None:
        """Insert `item`, or replace the item with its key and restore the order (upstream
        AddOrUpdate)."""
        key = self._key(item)
        at = self._index.get(key)
        if at is None:
            self._items.append(item)
            at = len(self._items) - 1
            self._index[key] = at
            self._up(at)
            return
        self._items[at] = item
        self._fix(at)

    def delete(self, key: str) -> T | None:
        at = self._index.get(key)
        if at is None:
            return None
        return self._remove_at(at)

    def pop(self) -> T | None:
        return self._remove_at(0) if self._items else None

    # -- sifting ---------------------------------------------------------------------------
    def _remove_at(self, at: int) -> T:
        items = self._items
        last = len(items) - 1
        if at != last:
            self._swap(at, last)
        item = items.pop()
        del self._index[self._key(item)]
        if at < len(items):
            self._fix(at)
        return item

    def _fix(self, at: int) -> None:
        if not self._down(at):
            self._up(at)

    def _swap(self, i: int, j: int) -> None:
        items = self._items
        items[i], items[j] = items[j], items[i]
        self._index[self._key(items[i])] = i
        self._index[self._key(items[j])] = j

    def _up(self, at: int) -> None:
        while at > 0:
            parent = (at - 1) // 2
            if not self._less(self._items[at], self._items[parent]):
                break
            self._swap(at, parent)
            at = parent

    def _down(self, at: int) -> bool:
        """Sift down; True when the item moved."""
        start = at
        n = len(self._items)
        while True:
            child = 2 * at + 1
            if child >= n:
                break
            right = child + 1
            if right < n and self._less(self._items[right], self._items[child]):
                child = right
            if not self._less(self._items[child], self._items[at]):
                break
            self._swap(at, child)
            at = child
        return at > start
