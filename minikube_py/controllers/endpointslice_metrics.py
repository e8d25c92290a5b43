"""Prometheus metrics of the two EndpointSlice controllers, under upstream's names.

Kubernetes pieces: staging/src/k8s.io/endpointslice/metrics (subsystem
`endpoint_slice_controller`: endpoints_added_per_sync, endpoints_removed_per_sync,
endpointslices_changed_per_sync{topology}, changes{operation}, syncs{result}) and
pkg/controller/endpointslicemirroring/metrics (subsystem
`endpoint_slice_mirroring_controller`: endpoints_added/updated/removed_per_sync,
addresses_skipped_per_sync, changes{operation}). The per-service gauges upstream keeps
(endpoints_desired, num_endpoint_slices, desired_endpoint_slices) are not kept here. One
instance per process: prometheus_client refuses a name twice.
"""

from __future__ import annotations

from typing import ClassVar

from prometheus_client import Counter, Histogram

#: upstream's ExponentialBuckets(2, 2, 15)
_BUCKETS = tuple(2.0 * 2 ** i for i in range(15))


class SliceMetrics:
    """One set of per-sync histograms and change counters for one controller subsystem."""

    _instances: ClassVar[dict[str, SliceMetrics]] = {}

    def __init__(self, subsystem: str, *, mirroring: bool) -> None:
        def histogram(name: str, doc: str, labels: tuple[str, ...] = ()) -> Histogram:
            return Histogram(f"{subsystem}_{name}", doc, labels, buckets=_BUCKETS)

        self.added = histogram("endpoints_added_per_sync",
                               "Number of endpoints added on each Service sync")
        self.removed = histogram("endpoints_removed_per_sync",
                                 "Number of endpoints removed on each Service sync")
        self.changes = Counter(f"{subsystem}_changes",
                               "Number of EndpointSlice changes", ["operation"])
        if mirroring:
            self.updated = histogram("endpoints_updated_per_sync",
                                     "Number of endpoints updated on each Endpoints sync")
            self.skipped = histogram("addresses_skipped_per_sync",
                                     "Number of addresses skipped on each Endpoints sync due to "
                                     "being invalid or exceeding MaxEndpointsPerSubset")
        else:
            self.slices_changed = histogram("endpointslices_changed_per_sync",
                                            "Number of EndpointSlices changed on each Service "
                                            "sync", ("topology",))
            self.syncs = Counter(f"{subsystem}_syncs",
                                 "Number of EndpointSlice syncs", ["result"])

    @classmethod
    def instance(cls, subsystem: str, *, mirroring: bool = False) -> SliceMetrics:
        metrics = cls._instances.get(subsystem)
        if metrics is None:
            metrics = cls._instances[subsystem] = cls(subsystem, mirroring=mirroring)
        return metrics


def endpointslice_metrics() -> SliceMetrics:
    return SliceMetrics.instance("endpoint_slice_controller")


def mirroring_metrics() -> SliceMetrics:
    return SliceMetrics.instance("endpoint_slice_mirroring_controller", mirroring=True)
