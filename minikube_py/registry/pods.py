"""Pod-specific registry rules: initial status, graceful deletion, binding.

Kubernetes v1.0 piece: pkg/registry/pod (strategy.go: PrepareForCreate, CheckGracefulDelete;
etcd/etcd.go: BindingREST.assignPod / setPodHostAndAnnotations). Pure functions over pod
dicts; the generic registry does the storage part in one compare-and-swap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api import errors
from ..api.defaults import pod_initial_status

if TYPE_CHECKING:
    from .generic import Registry

Obj = dict[str, Any]
DEFAULT_GRACE_PERIOD = 30


async def prepare_create(registry: Registry, pod: Obj) -> None:
    """A new pod is Pending; the client cannot set its status (upstream PrepareForCreate)."""
    pod["status"] = pod_initial_status(pod)


def graceful_delete(pod: Obj, options: dict[str, Any]) -> int:
    """The grace period a delete gets: 0 (immediate) for pods no kubelet runs."""
    spec = pod.get("spec") or {}
    grace = options.get("gracePeriodSeconds")
    if grace is None:
        grace = spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE_PERIOD)
    if not isinstance(grace, int) or isinstance(grace, bool):
        raise errors.bad_request("gracePeriodSeconds must be an integer")
    if grace < 0:
        grace = 1  # upstream: a negative period means "as soon as possible", i.e. 1 s
    if not spec.get("nodeName"):
        return 0  # never scheduled: no kubelet will finish the deletion
    if (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
        return 0
    return grace


def assign(pod: Obj, binding: Obj, now: str) -> Obj:
    """Set spec.nodeName from a Binding if unset (upstream assignPod), else 409.

    Also records PodScheduled=True and copies the binding's annotations onto the pod."""
    md = pod["metadata"]
    name = md.get("name", "")
    spec = pod.setdefault("spec", {})
    target = (binding.get("target") or {}).get("name")
    if md.get("deletionTimestamp"):
        raise errors.conflict("pods/binding", name,
                              f"pod {name} is being deleted, cannot be assigned to a host")
    if spec.get("nodeName"):
        raise errors.conflict("pods/binding", name,
                              f'pod {name} is already assigned to node "{spec["nodeName"]}"')
    spec["nodeName"] = target
    annotations = (binding.get("metadata") or {}).get("annotations") or {}
    if annotations:
        md.setdefault("annotations", {}).update(annotations)
    status = pod.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": now})
    status["conditions"] = conditions
    return pod


def validate_binding(binding: Any, pod_name: str) -> list[errors.FieldError]:
    """A Binding must target a Node by name (upstream BindingREST.Create checks)."""
    if not isinstance(binding, dict):
        return [errors.invalid("", "", "must be an object")]
    errs: list[errors.FieldError] = []
    target = binding.get("target")
    if not isinstance(target, dict):
        return [errors.required("target")]
    if not target.get("name"):
        errs.append(errors.required("target.name"))
    kind = target.get("kind", "")
    if kind not in ("", "Node"):
        errs.append(errors.not_supported("target.kind", kind, ["Node"]))
    name = (binding.get("metadata") or {}).get("name")
    if name and name != pod_name:
        errs.append(errors.invalid("metadata.name", name, f"must match the pod name {pod_name!r}"))
    return errs
