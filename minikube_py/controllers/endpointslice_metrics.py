"""Prometheus metrics of the two EndpointSlice controllers, under upstream's names.

Kubernetes pieces: staging/src/k8s.io/endpointslice/metrics (subsystem
`endpoint_slice_controller`: endpoints_added_per_sync, endpoints_removed_per_sync,
endpointslices_changed_per_sync{topology}, changes{operation}, syncs{result}, and the gauges
endpoints_desired, num_endpoint_slices, desired_endpoint_slices that upstream's metrics cache
sums over services) and
pkg/controller/endpointslicemirroring/metrics (subsystem
`endpoint_slice_mirroring_controller`: endpoints_added/updated/removed_per_sync,
addresses_skipped_per_sync, changes{operation}). One instance per process:
prometheus_client refuses a name twice.
"""

from __future__ import annotations

import math
from typing import ClassVar

from prometheus_client import Counter, Gauge, Histogram

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
            self.endpoints_desired = Gauge(f"{subsystem}_endpoints_desired",
                                           "Number of endpoints desired")
            self.num_slices = Gauge(f"{subsystem}_num_endpoint_slices",
                                    "Number of EndpointSlices")
            self.desired_slices = Gauge(f"{subsystem}_desired_endpoint_slices",
                                        "Number of EndpointSlices that would exist with "
                                        "perfect endpoint allocation")
            self._by_service: dict[str, tuple[int, int, int]] = {}

    def set_service(self, key: str, endpoints_by_ports: list[int], slices: int,
                    max_per_slice: int) -> None:
        """Upstream's metrics cache (UpdateServicePortCache): one service's desired endpoints,
        actual slices and ideal slices (ceil(endpoints / max) per port set, at least one);
        the gauges are the sums over services."""
        ideal = sum(max(1, math.ceil(n / max_per_slice)) for n in endpoints_by_ports) or 1
        self._by_service[key] = (sum(endpoints_by_ports), slices, ideal)
        self._publish()

    def service(self, key: str) -> tuple[int, int, int] | None:
        """(desired endpoints, slices, ideal slices) last recorded for one service."""
        return self._by_service.get(key)

    def delete_service(self, key: str) -> None:
        if self._by_service.pop(key, None) is not None:
            self._publish()

    def _publish(self) -> None:
        totals = [sum(v[i] for v in self._by_service.values()) for i in range(3)]
        self.endpoints_desired.set(totals[0])
        self.num_slices.set(totals[1])
        self.desired_slices.set(totals[2])

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
