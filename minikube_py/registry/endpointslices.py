"""EndpointSlices (discovery.k8s.io/v1): a scalable, sliced view of a Service's endpoints.

Kubernetes piece: pkg/registry/discovery/endpointslice (strategy.go, storage/storage.go):
namespaced, no short name, no status subresource. The endpoints, ports and addressType are the
"spec" of a slice — a change to any of them bumps metadata.generation (upstream
PrepareForUpdate), which is what the EndpointSlice controllers' trackers compare to notice an
informer cache that is behind their own writes.
"""

from __future__ import annotations

from .strategy import Strategy

ENDPOINT_SLICES = Strategy(
    group="discovery.k8s.io", version="v1", resource="endpointslices", kind="EndpointSlice",
    namespaced=True, key_root="endpointslices", spec_fields=("addressType", "endpoints", "ports"),
)
