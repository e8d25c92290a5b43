"""Writing a reconcile's plan: the I/O half of both EndpointSlice controllers.

Kubernetes piece: the client calls of staging/src/k8s.io/endpointslice/reconciler.go
`finalize` and pkg/controller/endpointslicemirroring/reconciler.go `finalize`: creates (unless
the owner is being deleted — the garbage collector would race them), then updates, then
deletes; each written slice is recorded in the tracker at the generation the server returned,
each delete as expected, so the informer events they cause are recognised as our own. A
namespace being terminated turns creates away with 403 — the sync then simply stops.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import StatusError
from ..client import Client
from ..client.resources import ENDPOINT_SLICES
from .endpointslice_metrics import SliceMetrics
from .endpointslice_tracker import EndpointSliceTracker
from .endpointslice_util import Plan

Obj = dict[str, Any]


async def write_plan(client: Client, plan: Plan, tracker: EndpointSliceTracker,
                     metrics: SliceMetrics, namespace: str, *, allow_create: bool) -> None:
    if allow_create:
        for slice_ in plan.create:
            try:
                created = await client.create(ENDPOINT_SLICES, slice_, namespace)
            except StatusError as exc:
                if exc.code == 403 and "being terminated" in exc.message:
                    return  # NamespaceTerminatingCause: drop the item
                raise
            tracker.update(created)
            metrics.changes.labels("create").inc()
    for slice_ in plan.update:
        updated = await client.update(ENDPOINT_SLICES, slice_)
        tracker.update(updated)
        metrics.changes.labels("update").inc()
    for slice_ in plan.delete:
        try:
            await client.delete(ENDPOINT_SLICES, slice_["metadata"]["name"], namespace)
        except StatusError as exc:
            if exc.code != 404:
                raise
        tracker.expect_deletion(slice_)
        metrics.changes.labels("delete").inc()
