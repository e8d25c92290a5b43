"""ImageLocality: favour nodes that already have the pod's images, weighted by how rare they are.

Kubernetes piece: pkg/scheduler/framework/plugins/imagelocality (1.31), the successor of
ImageLocalityPriority (v1.5 scored the total size of present images on 0..10). Upstream 1.31:
each image of the pod's init and regular containers that the node has adds
`size * (nodes having it / all nodes)` (spread, so an image on every node does not pull every
pod to one node); the sum is clamped to [23 MB, 1000 MB * containers] and scaled to 0..100.
Image names compare after upstream's normalisation (":latest" added when there is no tag).

The per-node image lists live in node.status.images, too long for table columns; an
`ImageIndex` per NodeTable (like the inter-pod terms index) keeps, per image name, the rows
that have it and its size, re-reading a row only when its node object changed.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...algorithm.predicates_meta import PodMeta
from ...nodetable import NodeTable
from ..interface import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    Handle,
    Rows,
)

NAME = "ImageLocality"
_MB = 1024 * 1024
#: upstream minThreshold / maxContainerThreshold
MIN_THRESHOLD = 23 * _MB
MAX_CONTAINER_THRESHOLD = 1000 * _MB


def normalized_image_name(name: str) -> str:
    """upstream normalizedImageName: add ":latest" when the name has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def _images_of(node: Any) -> dict[str, int]:
    found: dict[str, int] = {}
    for image in ((node or {}).get("status") or {}).get("images") or ():
        if not isinstance(image, dict):
            continue
        size = int(image.get("sizeBytes") or 0)
        for name in image.get("names") or ():
            found.setdefault(name, size)
    return found


class ImageIndex:
    """image name -> {row: size} for one NodeTable, refreshed for rows whose node changed."""

    def __init__(self) -> None:
        self.versions = np.zeros(0, dtype=np.int64)
        self.row_images: list[dict[str, int]] = []
        self.rows_with: dict[str, dict[int, int]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def refresh(self, nodes: NodeTable) -> ImageIndex:
        old = len(self.row_images)
        self.row_images.extend({} for _ in range(nodes.size - old))
        versions = np.zeros(nodes.size, dtype=np.int64)
        versions[:old] = self.versions[:old]
        for row in np.flatnonzero(versions != nodes.node_version).tolist():
            self._replace(row, _images_of(nodes.infos[row].node))
        self.versions = nodes.node_version.copy()
        return self

    def holders(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows having image `name`, its size on each), as arrays kept until it changes."""
        found = self._arrays.get(name)
        if found is None:
            rows = self.rows_with.get(name)
            if not rows:
                return None
            found = self._arrays[name] = (np.fromiter(rows.keys(), np.int64, len(rows)),
                                          np.fromiter(rows.values(), np.int64, len(rows)))
        return found

    def _replace(self, row: int, images: dict[str, int]) -> None:
        for name in (*self.row_images[row], *images):
            self._arrays.pop(name, None)
        for name in self.row_images[row]:
            holders = self.rows_with.get(name)
            if holders is not None:
                holders.pop(row, None)
                if not holders:
                    del self.rows_with[name]
        for name, size in images.items():
            self.rows_with.setdefault(name, {})[row] = size
        self.row_images[row] = images


_INDEXES: weakref.WeakKeyDictionary[NodeTable, ImageIndex] = weakref.WeakKeyDictionary()


def image_index(nodes: NodeTable) -> ImageIndex:
    index = _INDEXES.get(nodes)
    if index is None or len(index.row_images) > nodes.size:
        index = _INDEXES[nodes] = ImageIndex()
    return index.refresh(nodes)


def calculate_priority(sums: np.ndarray, containers: int) -> np.ndarray:
    """upstream calculatePriority over an array of summed image scores."""
    high = MAX_CONTAINER_THRESHOLD * containers
    clamped = np.clip(sums, MIN_THRESHOLD, high)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (high - MIN_THRESHOLD)


class ImageLocality:
    name = NAME

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        spec = pod.pod.get("spec") or {}
        containers = [c for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
                      if isinstance(c, dict)]
        scores = np.zeros(len(rows), dtype=np.int64)
        if not containers:
            return scores
        index = image_index(nodes)
        total = max(nodes.size, 1)
        sums = np.zeros(nodes.size, dtype=np.int64)
        for container in containers:
            holders = index.holders(normalized_image_name(container.get("image") or ""))
            if holders is None:
                continue
            rows_with, sizes = holders
            sums[rows_with] += (sizes * (len(rows_with) / total)).astype(np.int64)
        return calculate_priority(sums[rows], len(containers))

    def score_extensions(self) -> None:
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD))]


def new(args: Mapping[str, Any], handle: Handle) -> ImageLocality:
    return ImageLocality()
