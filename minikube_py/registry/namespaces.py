"""Namespace lifecycle in the registry: Active on create, Terminating on delete.

Kubernetes v1.0 piece: pkg/registry/namespace (strategy.go and etcd.go's Delete: the first
delete only marks the namespace Terminating; the namespace controller empties it and calls
`finalize`; the namespace is removed when spec.finalizers is empty). The controller arrives
with the controller manager; until then a Terminating namespace is finished by `finalize`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api import meta

if TYPE_CHECKING:
    from .generic import Registry

Obj = dict[str, Any]
FINALIZER = "kubernetes"
PROTECTED = frozenset({"default", "kube-system", "kube-public"})


async def prepare_create(registry: Registry, ns: Obj) -> None:
    ns["status"] = {"phase": "Active"}
    spec = ns.setdefault("spec", {})
    if not spec.get("finalizers"):
        spec["finalizers"] = [FINALIZER]


def mark_terminating(ns: Obj) -> Obj | None:
    """First delete: Terminating + deletionTimestamp. Later deletes: no change, unless the
    finalizers are already gone (then None = delete for real)."""
    status = ns.setdefault("status", {})
    md = ns["metadata"]
    if status.get("phase") != "Terminating":
        status["phase"] = "Terminating"
        md["deletionTimestamp"] = meta.now_rfc3339()
        md["deletionGracePeriodSeconds"] = 0
        return ns
    if finalized(ns):
        return None
    return ns


def finalized(ns: Obj) -> bool:
    """Terminating with no finalizers left in spec or metadata: the namespace can go."""
    md = ns.get("metadata") or {}
    return (
        bool(md.get("deletionTimestamp"))
        and not (ns.get("spec") or {}).get("finalizers")
        and not md.get("finalizers")
    )


def apply_finalize(old: Obj, body: Obj) -> Obj:
    """`PUT namespaces/{name}/finalize`: only spec.finalizers changes."""
    new = dict(old)
    spec = dict(old.get("spec") or {})
    spec["finalizers"] = list((body.get("spec") or {}).get("finalizers") or [])
    new["spec"] = spec
    return new
