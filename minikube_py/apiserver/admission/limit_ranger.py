"""LimitRanger: default and bound container resources from the namespace's LimitRange objects.

Kubernetes v1.0 piece: plugin/pkg/admission/limitranger (defaulting as in later releases). On
pod create (and update, for the checks), for every LimitRange in the namespace:

- items of type Container supply `default` (limits) and `defaultRequest` (requests) for
  containers and init containers that do not set them; the pod gets upstream's
  `kubernetes.io/limit-ranger` annotation naming what was set (defaults only on create);
- `min`, `max` and `maxLimitRequestRatio` are checked per Container and, for type Pod, on the
  sum over the containers, with upstream's messages; any failure is 403 Forbidden
  (`pods "x" is forbidden: minimum cpu usage per Container is 100m, but request is 50m`).

Pure decisions (`merge_defaults`, `violations`) take plain dicts; the plugin only lists
LimitRanges through the server's registry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from fractions import Fraction
from typing import Any

from ...api import quantity
from ...api.defaults import apply_defaults
from .chain import Attributes
from .denial import aggregate, forbidden

Obj = dict[str, Any]
ListLimitRanges = Callable[[str], Awaitable[list[Obj]]]
ANNOTATION = "kubernetes.io/limit-ranger"


def _containers(pod: Obj) -> list[tuple[str, Obj]]:
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    out = []
    for key, label in (("containers", "container"), ("initContainers", "init container")):
        items = spec.get(key)
        out += [(label, c) for c in (items if isinstance(items, list) else ())
                if isinstance(c, dict)]
    return out


def _resource_list(holder: Any, key: str) -> dict[str, Any]:
    value = holder.get(key) if isinstance(holder, dict) else None
    return value if isinstance(value, dict) else {}


def _items(limit_ranges: list[Obj], kind: str) -> list[Obj]:
    return [item for lr in limit_ranges for item in (lr.get("spec") or {}).get("limits") or ()
            if isinstance(item, dict) and item.get("type") == kind]


def merge_defaults(pod: Obj, limit_ranges: list[Obj]) -> list[str]:
    """Fill missing container requests/limits from Container items' defaultRequest/default (in
    place, upstream mergeContainerResources) and set the annotation; returns its parts."""
    defaults: dict[str, Any] = {}
    default_requests: dict[str, Any] = {}
    for item in _items(limit_ranges, "Container"):
        defaults.update(_resource_list(item, "default"))
        default_requests.update(_resource_list(item, "defaultRequest"))
    if not defaults and not default_requests:
        return []
    notes: list[str] = []
    for label, container in _containers(pod):
        resources = container.get("resources")
        if not isinstance(resources, dict):
            resources = container["resources"] = {}
        for key, source, word in (("requests", default_requests, "request"),
                                  ("limits", defaults, "limit")):
            if not source:
                continue
            target = resources.get(key)
            if not isinstance(target, dict):
                target = resources[key] = {}
            added = sorted(name for name in source if name not in target)
            for name in added:
                target[name] = source[name]
            if added:
                notes.append(f"{', '.join(added)} {word} for {label} {container.get('name', '')}")
    if notes:
        md = pod.setdefault("metadata", {})
        annotations = md.get("annotations")
        if not isinstance(annotations, dict):
            annotations = md["annotations"] = {}
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)
    return notes


def _value(raw: Any) -> Fraction | None:
    try:
        return quantity.parse_quantity(raw)
    except ValueError:
        return None


def _text(raw: Any) -> str:
    try:
        return quantity.canonical(raw)
    except ValueError:
        return str(raw)


def _check(kind: str, item: Obj, requests: dict[str, Any], limits: dict[str, Any]) -> list[str]:
    """Upstream minConstraint / maxConstraint / limitRequestRatioConstraint for one item."""
    errs: list[str] = []
    for name, enforced in sorted(_resource_list(item, "min").items()):
        floor = _value(enforced)
        req, lim = requests.get(name), limits.get(name)
        if floor is None:
            continue
        if req is None:
            errs.append(f"minimum {name} usage per {kind} is {_text(enforced)}.  No request is "
                        "specified")
        elif (_value(req) or 0) < floor:
            errs.append(f"minimum {name} usage per {kind} is {_text(enforced)}, but request is "
                        f"{_text(req)}")
        elif lim is not None and (_value(lim) or 0) < floor:
            errs.append(f"minimum {name} usage per {kind} is {_text(enforced)}, but limit is "
                        f"{_text(lim)}")
    for name, enforced in sorted(_resource_list(item, "max").items()):
        ceiling = _value(enforced)
        req, lim = requests.get(name), limits.get(name)
        if ceiling is None:
            continue
        if lim is None:
            errs.append(f"maximum {name} usage per {kind} is {_text(enforced)}.  No limit is "
                        "specified")
        elif (_value(lim) or 0) > ceiling:
            errs.append(f"maximum {name} usage per {kind} is {_text(enforced)}, but limit is "
                        f"{_text(lim)}")
        elif req is not None and (_value(req) or 0) > ceiling:
            errs.append(f"maximum {name} usage per {kind} is {_text(enforced)}, but request is "
                        f"{_text(req)}")
    for name, enforced in sorted(_resource_list(item, "maxLimitRequestRatio").items()):
        ratio = _value(enforced)
        req = _value(requests[name]) if name in requests else None
        lim = _value(limits[name]) if name in limits else None
        if ratio is None:
            continue
        prefix = f"{name} max limit to request ratio per {kind} is {_text(enforced)}"
        if not req:
            errs.append(f"{prefix}, but no request is specified or request is 0")
        elif not lim:
            errs.append(f"{prefix}, but no limit is specified or limit is 0")
        elif lim / req > ratio:
            errs.append(f"{prefix}, but provided ratio is {float(lim / req):f}")
    return errs


def _pod_totals(pod: Obj, key: str) -> dict[str, Fraction]:
    """Sum over containers of one resource list; a resource missing from any container is left
    out (upstream counts the pod-level value only when every container states it)."""
    containers = [c for label, c in _containers(pod) if label == "container"]
    totals: dict[str, Fraction] = {}
    names = set()
    for c in containers:
        names |= set(_resource_list(c.get("resources"), key))
    for name in names:
        values = [_value(_resource_list(c.get("resources"), key).get(name)) for c in containers]
        if all(v is not None for v in values):
            totals[name] = sum(values, Fraction(0))  # type: ignore[arg-type]
    return totals


def violations(pod: Obj, limit_ranges: list[Obj]) -> list[str]:
    """Every min/max/ratio violation of `pod` against `limit_ranges`, in upstream's words."""
    errs: list[str] = []
    for item in _items(limit_ranges, "Container"):
        for _label, container in _containers(pod):
            resources = container.get("resources")
            errs += _check("Container", item, _resource_list(resources, "requests"),
                           _resource_list(resources, "limits"))
    for item in _items(limit_ranges, "Pod"):
        requests = {k: quantity.format_quantity(v) for k, v in _pod_totals(pod, "requests").items()}
        limits = {k: quantity.format_quantity(v) for k, v in _pod_totals(pod, "limits").items()}
        errs += _check("Pod", item, requests, limits)
    return errs


class LimitRanger:
    name = "LimitRanger"

    def __init__(self, list_limit_ranges: ListLimitRanges) -> None:
        self._list = list_limit_ranges

    async def admit(self, attrs: Attributes) -> None:
        if (attrs.operation not in ("CREATE", "UPDATE") or attrs.strategy.resource != "pods"
                or attrs.subresource or not isinstance(attrs.obj, dict)):
            return
        limit_ranges = await self._list(attrs.namespace)
        if not limit_ranges:
            return
        pod = attrs.obj
        apply_defaults("Pod", pod)  # upstream admits the defaulted object (requests <- limits)
        if attrs.operation == "CREATE":
            merge_defaults(pod, limit_ranges)
        errs = violations(pod, limit_ranges)
        if errs:
            raise forbidden(attrs, aggregate(errs))
