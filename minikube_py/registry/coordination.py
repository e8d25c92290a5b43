"""Leases (coordination.k8s.io/v1): the small lock records of node heartbeats and leader
election.

Kubernetes piece: pkg/registry/coordination/lease (strategy.go, storage/storage.go):
namespaced, no status subresource, no short name; every write is the whole spec. 1.31's
PrepareForCreate/PrepareForUpdate drop `strategy` and `preferredHolder` while the
CoordinatedLeaderElection alpha gate is off (its default), unless an update's old object
already used them (dropDisabledSpecFields). Not to be confused with registry/leases.py, the
etcd leases that expire events.
"""

from __future__ import annotations

from typing import Any

from .strategy import Strategy

#: LeaseSpec fields of the CoordinatedLeaderElection gate (alpha, off in 1.31)
GATED_SPEC_FIELDS = ("strategy", "preferredHolder")


def drop_gated_fields(spec: Any, old_spec: Any = None) -> None:
    """dropDisabledSpecFields: the gated fields go unless the old object set them."""
    if not isinstance(spec, dict):
        return
    old = old_spec if isinstance(old_spec, dict) else {}
    if any(old.get(name) for name in GATED_SPEC_FIELDS):
        return
    for name in GATED_SPEC_FIELDS:
        spec.pop(name, None)


async def _prepare_create(registry: Any, obj: dict[str, Any]) -> None:
    drop_gated_fields(obj.get("spec"))


async def _prepare_update(registry: Any, new: dict[str, Any], old: dict[str, Any]) -> None:
    drop_gated_fields(new.get("spec"), old.get("spec"))


LEASES = Strategy(
    group="coordination.k8s.io", version="v1", resource="leases", kind="Lease",
    namespaced=True, key_root="leases", prepare_create=_prepare_create,
    prepare_update=_prepare_update,
)
