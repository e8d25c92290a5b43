"""apps/v1 DaemonSets, StatefulSets and ControllerRevisions as Strategy values.

Kubernetes pieces: pkg/registry/apps/daemonset/strategy.go (PrepareForCreate/Update: a new
DaemonSet starts at template generation 1, each template change bumps it), its storage.go
(status subresource), pkg/registry/apps/statefulset (status and scale subresources) and
pkg/registry/apps/controllerrevision (no status, no spec: `data` and `revision`).

Why the template generation lives in an annotation: apps/v1 has no `templateGeneration`
field (only extensions/v1beta1 had one); upstream's conversion keeps the internal field in
`deprecated.daemonset.template.generation`, and the DaemonSet controller still labels its pods
with it (`pod-template-generation`). A client cannot move it: updates take the old value, plus
one when the template changed.
"""

from __future__ import annotations

from typing import Any

from .strategy import Strategy, SubresourceSpec

Obj = dict[str, Any]

TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
_STATUS = SubresourceSpec("status", ("get", "patch", "update"))
_SCALE = SubresourceSpec("scale", ("get", "patch", "update"), kind="Scale", group="autoscaling",
                         version="v1")


def _annotations(obj: Obj) -> dict[str, str]:
    md = obj.setdefault("metadata", {})
    annotations = md.get("annotations")
    if not isinstance(annotations, dict):
        annotations = md["annotations"] = {}
    return annotations


def template_generation(obj: Obj) -> int:
    """The DaemonSet's template generation (0 when unset or malformed)."""
    raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(
        TEMPLATE_GENERATION_ANNOTATION)
    try:
        return int(raw)
    except (TypeError, ValueError):
        return 0


async def _daemon_set_create(registry: Any, obj: Obj) -> None:
    obj["status"] = {"currentNumberScheduled": 0, "numberMisscheduled": 0,
                     "desiredNumberScheduled": 0, "numberReady": 0}
    _annotations(obj)[TEMPLATE_GENERATION_ANNOTATION] = "1"


async def _daemon_set_update(registry: Any, new: Obj, old: Obj) -> None:
    generation = template_generation(old)
    if (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template"):
        generation += 1
    _annotations(new)[TEMPLATE_GENERATION_ANNOTATION] = str(generation)


async def _stateful_set_create(registry: Any, obj: Obj) -> None:
    obj["status"] = {"replicas": 0, "availableReplicas": 0}


DAEMONSETS = Strategy(
    group="apps", version="v1", resource="daemonsets", kind="DaemonSet", namespaced=True,
    key_root="daemonsets", short_names=("ds",), categories=("all",),
    subresources=(_STATUS,), has_status=True,
    prepare_create=_daemon_set_create, prepare_update=_daemon_set_update,
)

STATEFULSETS = Strategy(
    group="apps", version="v1", resource="statefulsets", kind="StatefulSet", namespaced=True,
    key_root="statefulsets", short_names=("sts",), categories=("all",),
    subresources=(_STATUS, _SCALE), has_status=True, prepare_create=_stateful_set_create,
)

#: `data` and `revision` are the whole object (no spec, no status)
CONTROLLER_REVISIONS = Strategy(
    group="apps", version="v1", resource="controllerrevisions", kind="ControllerRevision",
    namespaced=True, key_root="controllerrevisions", spec_fields=(),
)

STRATEGIES = (DAEMONSETS, STATEFULSETS, CONTROLLER_REVISIONS)
