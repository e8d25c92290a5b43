"""Aggregated discovery's rendered bodies, kept while what they were rendered from holds.

Kubernetes piece: k8s.io/apiserver's endpoints/discovery/aggregated ResourceManager, which
keeps the serialized APIGroupDiscoveryList and re-serializes only when a group version is
added, removed or changes (a CRD, an APIService) — every `kubectl` command and every
namespace deletion (the namespace controller reads discovery each time) asks for it, and the
document does not change between them. Here the key is a fingerprint the caller computes
from its sources (the resource table's generation, the aggregator's APIServices and fetched
documents): a body rendered under another fingerprint is rendered again. Pure, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable


class RenderedMemo:
    """Rendered bodies by key, each valid while its fingerprint is the current one."""

    def __init__(self) -> None:
        self._bodies: dict[Hashable, tuple[Hashable, bytes]] = {}

    def get(self, key: Hashable, fingerprint: Hashable, render: Callable[[], bytes]) -> bytes:
        held = self._bodies.get(key)
        if held is not None and held[0] == fingerprint:
            return held[1]
        body = render()
        self._bodies[key] = (fingerprint, body)
        return body
