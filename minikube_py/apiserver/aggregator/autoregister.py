"""One local APIService per group version this server serves itself.

Kubernetes pieces: kube-aggregator's pkg/controllers/autoregister (APIServices labelled
`kube-aggregator.kubernetes.io/automanaged`: `onstart` for the built-in group versions, synced
once at start; `true` for CRD group versions, kept in step as CRDs come and go) fed by
kube-apiserver's apiservicesToRegister and crdregistration_controller.go. So
`kubectl get apiservices` lists `v1.`, `v1.apps`, ... `Local`, like a 1.31 cluster.

`desired` is pure (what should exist); `sync` writes the difference through the registry.
APIServices without the label (a user's), or given a `spec.service` since, are never touched.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...api import errors
from ...registry.apiservices import KIND, service_of
from ...registry.generic import Registry
from .priorities import local_priority

Obj = dict[str, Any]
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"


def desired(served: Iterable[tuple[str, str, bool]]) -> dict[str, Obj]:
    """APIService name -> the object for (group, version, custom) served locally."""
    out: dict[str, Obj] = {}
    for group, version, custom in served:
        priority = local_priority(group, version, custom)
        out[f"{version}.{group}"] = {
            "apiVersion": "apiregistration.k8s.io/v1", "kind": KIND,
            "metadata": {"name": f"{version}.{group}",
                         "labels": {AUTOMANAGED: "true" if custom else "onstart"}},
            "spec": {"group": group, "version": version,
                     "groupPriorityMinimum": priority.group,
                     "versionPriority": priority.version}}
    return out


async def sync(registry: Registry, want: dict[str, Obj], have: dict[str, Obj]) -> None:
    """Create what is missing, correct what drifted, delete automanaged ones not wanted."""
    for name, obj in want.items():
        current = have.get(name)
        try:
            if current is None:
                await registry.create("", obj)
            elif _managed(current) and current.get("spec") != obj["spec"]:
                await registry.update("", name, _with_spec(obj["spec"]))
        except errors.StatusError as exc:
            if exc.code not in (404, 409):  # a race with another writer: the next sync fixes it
                raise
    for name, current in have.items():
        if name not in want and _managed(current):
            try:
                await registry.delete("", name, None)
            except errors.StatusError as exc:
                if exc.code != 404:
                    raise


def _managed(obj: Obj) -> bool:
    """Labelled automanaged and still local: one pointed at a service since is the user's."""
    return (AUTOMANAGED in ((obj.get("metadata") or {}).get("labels") or {})
            and service_of(obj) is None)


def kept_in_sync(obj: Obj) -> bool:
    """Upstream re-creates a deleted `automanaged: true` APIService (a CRD's) while its group
    version is served; an `onstart` one only at the next start."""
    return ((obj.get("metadata") or {}).get("labels") or {}).get(AUTOMANAGED) == "true"


def _with_spec(spec: Obj):
    def produce(old: Obj | None) -> Obj:
        if old is None:
            raise errors.StatusError(404, "NotFound", "gone")
        return {**old, "spec": dict(spec)}
    return produce
