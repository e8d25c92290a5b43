"""API versions Kubernetes 1.31 no longer serves, kept for components of older releases.

Kubernetes piece: the storage-version/cohabitation wiring of pkg/controlplane (one etcd
resource served in several group versions) for versions upstream removed: policy/v1beta1
PodDisruptionBudgets, discovery.k8s.io/v1beta1 EndpointSlices and batch/v1beta1 CronJobs
(all removed in 1.25). v1.20's kube-scheduler and kube-controller-manager list and watch
exactly these (apiserver/informers_v1_20.yaml has the whole list and where it comes from),
and v1.20's controller manager silently skips the disruption, EndpointSlice and CronJob
controllers when discovery does not list them.

Each one is a view (Strategy.stored_as) of the current version's stored objects, converted at
the registry's edge, as autoscaling/v1 HPAs are of v2: one key space, one watch fan-out, and
an object written in either version is read in the other. None is served unless
--runtime-config turns it on (`DISABLED_BY_DEFAULT`): a real 1.31 API server refuses these
versions, so serving them is our extension for running older components against us.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from ..api import endpointslice_v1beta1, pdb_v1beta1
from ..apiextensions.conversion import set_api_version
from .endpointslices import ENDPOINT_SLICES
from .poddisruptionbudgets import POD_DISRUPTION_BUDGETS
from .strategy import StoredAs, Strategy


def _view(storage: Strategy, version: str, stored_as: StoredAs) -> Strategy:
    """`storage` served in another version of its group, over its keys, with the `Warning`
    upstream's 1.21-1.24 servers sent on every request to these versions."""
    warning = (f"{storage.group}/{version} {storage.kind} is deprecated in v1.21+, unavailable "
               f"in v1.25+; use {storage.api_version} {storage.kind}")
    return replace(storage, version=version, stored_as=stored_as, deprecation_warning=warning)


POD_DISRUPTION_BUDGETS_V1BETA1 = _view(
    POD_DISRUPTION_BUDGETS, "v1beta1",
    StoredAs(storage=POD_DISRUPTION_BUDGETS, to_storage=pdb_v1beta1.to_v1,
             from_storage=pdb_v1beta1.from_v1, field_labels={}))

ENDPOINT_SLICES_V1BETA1 = _view(
    ENDPOINT_SLICES, "v1beta1",
    StoredAs(storage=ENDPOINT_SLICES, to_storage=endpointslice_v1beta1.to_v1,
             from_storage=endpointslice_v1beta1.from_v1, field_labels={}))


def cronjobs_v1beta1(cronjobs: Strategy) -> Strategy:
    """batch/v1beta1 CronJobs: the same fields as batch/v1 (upstream's conversion is the
    generated field-by-field copy), so only apiVersion changes at the edge. Built from the
    batch/v1 strategy, which registry/resources.py defines."""
    return _view(cronjobs, "v1beta1", StoredAs(
        storage=cronjobs, to_storage=partial(set_api_version, api_version="batch/v1"),
        from_storage=partial(set_api_version, api_version="batch/v1beta1"), field_labels={}))


def strategies(cronjobs: Strategy) -> tuple[Strategy, ...]:
    """Every removed version this server can serve, in discovery order (after the current
    version of each group, so the current one stays the preferred version)."""
    return (POD_DISRUPTION_BUDGETS_V1BETA1, ENDPOINT_SLICES_V1BETA1, cronjobs_v1beta1(cronjobs))
