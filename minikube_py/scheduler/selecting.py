"""Which Services and controllers select a pod: the inputs of upstream's GetPodServices,
GetPodControllers and helper.DefaultSelector.

Kubernetes piece: pkg/scheduler/algorithm/priorities/selector_spreading.go (getSelectors) and
framework/plugins/helper (DefaultSelector). Both the v1.x priorities (`scheduler.py`) and the
framework's PodTopologySpread defaults (`framework/plugins/cluster_lookups.py`) ask it for every
pod, so a selector is parsed once per object: informer objects are replaced on change, never
edited, so the object's identity says when its selector must be rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Obj = dict[str, Any]
#: (objects, how an object's selector is read: None when it has none)
Source = tuple[Iterable[Obj], Callable[[Obj], Any]]


class SelectingObjects:
    """`matching(pod, sources)`: the (object, selector) pairs in the pod's namespace whose
    selector matches the pod's labels, selectors memoised per object (at most `kept`)."""

    def __init__(self, kept: int = 10_000) -> None:
        self._kept = kept
        #: id(object) -> (object, its selector); the entry keeps the object so the id is not reused
        self._built: dict[int, tuple[Obj, Any]] = {}

    def matching(self, pod: Obj, sources: Iterable[Source]) -> list[tuple[Obj, Any]]:
        md = pod.get("metadata") or {}
        namespace, labels = md.get("namespace"), md.get("labels") or {}
        built = self._built
        out = []
        for objects, selector_of in sources:
            for obj in objects:
                if (obj.get("metadata") or {}).get("namespace") != namespace:
                    continue
                cached = built.get(id(obj))
                if cached is None or cached[0] is not obj:
                    if len(built) > self._kept:
                        built.clear()
                    cached = built[id(obj)] = (obj, selector_of(obj))
                selector = cached[1]
                if selector is not None and selector.matches(labels):
                    out.append((obj, selector))
        return out
