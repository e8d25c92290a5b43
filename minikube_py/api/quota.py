"""What objects cost against a ResourceQuota, and the admission decision: pure functions.

Kubernetes piece: pkg/quota/v1/evaluator/core (pods: pods, cpu/memory/ephemeral-storage
requests and limits, hugepages, `requests.<extended resource>`, count/pods; services: services,
services.nodeports, services.loadbalancers; persistentvolumeclaims: persistentvolumeclaims,
requests.storage and their `<class>.storageclass.storage.k8s.io/` forms; the generic
`count/<resource>[.<group>]` evaluator, and the object count of every legacy name such as
`resourcequotas`, which counts the quotas themselves) and the checks of
staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go (CheckRequest:
Constraints -> `must specify ...`, exceeded -> `exceeded quota: ...`). Quota scopes
Terminating, NotTerminating, BestEffort and NotBestEffort are understood; a quota with any other
scope or a scopeSelector is not enforced here.

Shared by the ResourceQuota admission plugin (the API server) and the resourcequota controller
(the controller manager), as upstream shares pkg/quota between them.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from . import quantity
from .defaults import qos_class
from .validation.resources import HUGEPAGES_PREFIX, is_native

Obj = dict[str, Any]
Usage = dict[str, Fraction]

#: quota names upstream counts for core objects besides `count/<resource>`
LEGACY_COUNTS = ("pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
                 "configmaps", "persistentvolumeclaims")
#: pod compute names -> (requests|limits, resource); a bare name means the requests
POD_COMPUTE = {f"{prefix}{res}": (kind, res)
               for res in ("cpu", "memory", "ephemeral-storage")
               for prefix, kind in (("", "requests"), ("requests.", "requests"),
                                    ("limits.", "limits"))}
#: the compute names a pod must state when a quota limits them (upstream's validationSet: "it
#: was a mistake ... do not add more resources to this list", so not ephemeral-storage)
POD_REQUIRED = frozenset(name for name in POD_COMPUTE if not name.endswith("ephemeral-storage"))
#: upstream's storage-class-scoped claim names: `<class>.storageclass.storage.k8s.io/<name>`
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
CLAIM_NAMES = ("persistentvolumeclaims", "requests.storage")
KNOWN_SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort")


def tracked_resource(name: str) -> tuple[str, str] | None:
    """(group, resource) of the objects a quota name counts, or None when unknown."""
    if name in POD_COMPUTE or _pod_prefixed(name):
        return "", "pods"
    if name in ("services.nodeports", "services.loadbalancers"):
        return "", "services"
    if name == "requests.storage" or _storage_class_name(name):
        return "", "persistentvolumeclaims"
    if name in LEGACY_COUNTS:
        return "", name
    if name.startswith("count/") and len(name) > 6:
        resource, _, group = name[6:].partition(".")
        return group, resource
    return None


def _pod_prefixed(name: str) -> bool:
    """Hugepages (`hugepages-*`, `requests.hugepages-*`) and `requests.<extended resource>`:
    upstream podEvaluator.MatchingResources beyond its fixed list."""
    return (name.startswith((HUGEPAGES_PREFIX, "requests." + HUGEPAGES_PREFIX))
            or (name.startswith("requests.") and not is_native(name)))


def _storage_class_name(name: str) -> bool:
    prefix, sep, rest = name.partition(STORAGE_CLASS_SUFFIX)
    return bool(prefix and sep and rest in CLAIM_NAMES)


def _value(raw: Any) -> Fraction:
    try:
        return quantity.parse_quantity(raw)
    except ValueError:
        return Fraction(0)


def _containers(pod: Obj, key: str) -> list[Obj]:
    spec = pod.get("spec")
    items = spec.get(key) if isinstance(spec, dict) else None
    return [c for c in items if isinstance(c, dict)] if isinstance(items, list) else []


def _amount(container: Obj, kind: str, name: str) -> Fraction | None:
    resources = container.get("resources")
    values = resources.get(kind) if isinstance(resources, dict) else None
    if not isinstance(values, dict) or name not in values:
        return None
    return _value(values[name])


def pod_compute(pod: Obj, kind: str, name: str) -> Fraction:
    """Upstream PodRequests/PodLimits: the containers' sum, or the largest init container."""
    total = sum((_amount(c, kind, name) or Fraction(0) for c in _containers(pod, "containers")),
                Fraction(0))
    for init in _containers(pod, "initContainers"):
        total = max(total, _amount(init, kind, name) or Fraction(0))
    return total


def _requested_names(pod: Obj) -> set[str]:
    names: set[str] = set()
    for key in ("containers", "initContainers"):
        for container in _containers(pod, key):
            resources = container.get("resources")
            requests = resources.get("requests") if isinstance(resources, dict) else None
            if isinstance(requests, dict):
                names.update(n for n in requests if isinstance(n, str))
    return names


def _pod_usage(pod: Obj, out: Usage) -> None:
    """Upstream podComputeUsageHelper over the pod's requests and limits: the fixed names, then
    hugepages (bare and `requests.`) and extended resources (`requests.` only)."""
    out["pods"] = Fraction(1)
    for name, (kind, res) in POD_COMPUTE.items():
        out[name] = pod_compute(pod, kind, res)
    for res in _requested_names(pod):
        if res.startswith(HUGEPAGES_PREFIX):
            out[res] = out["requests." + res] = pod_compute(pod, "requests", res)
        elif not is_native(res):
            out["requests." + res] = pod_compute(pod, "requests", res)


def pod_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def usage(group: str, resource: str, obj: Obj) -> Usage:
    """Everything one object counts against a quota. `count/pods` counts every stored pod;
    `pods` and compute only pods that have not finished (upstream PodUsageFunc)."""
    out: Usage = {f"count/{resource}.{group}" if group else f"count/{resource}": Fraction(1)}
    if not group and resource in LEGACY_COUNTS and resource != "pods":
        out[resource] = Fraction(1)
    if not group and resource == "pods" and not pod_terminal(obj):
        _pod_usage(obj, out)
    if not group and resource == "services":
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        kind = spec.get("type")
        ports = spec.get("ports") if isinstance(spec.get("ports"), list) else []
        out["services.loadbalancers"] = Fraction(1 if kind == "LoadBalancer" else 0)
        out["services.nodeports"] = Fraction(
            len(ports) if kind in ("NodePort", "LoadBalancer") else 0)
    if not group and resource == "persistentvolumeclaims":
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        resources = spec.get("resources") if isinstance(spec.get("resources"), dict) else {}
        requests = resources.get("requests") if isinstance(resources.get("requests"), dict) else {}
        out["requests.storage"] = _value(requests.get("storage", 0))
        storage_class = spec.get("storageClassName")
        if isinstance(storage_class, str) and storage_class:
            for name in CLAIM_NAMES:
                out[f"{storage_class}{STORAGE_CLASS_SUFFIX}{name}"] = out[name]
    return out


#: resources whose usage an UPDATE can change (upstream evaluators that handle Update:
#: a service's type and ports, a claim's requested size); a pod's resources are immutable
UPDATE_CHARGED = frozenset({("", "services"), ("", "persistentvolumeclaims")})


def update_delta(group: str, resource: str, old: Obj, new: Obj) -> Usage:
    """What an update adds (upstream SubtractWithNonNegativeResult: a decrease is not
    charged back at admission; the quota controller's recalculation releases it)."""
    before = usage(group, resource, old)
    return {name: amount - before.get(name, Fraction(0))
            for name, amount in usage(group, resource, new).items()
            if amount > before.get(name, Fraction(0))}


def tracked_resources(quota: Obj) -> list[tuple[str, str]]:
    """(group, resource) of every kind of object `quota` counts, in a stable order."""
    return sorted({t for t in map(tracked_resource, hard_of(quota)) if t is not None})


def no_usage(quota: Obj) -> Usage:
    """Zero for every name `quota` limits: where a recalculation starts."""
    return {name: Fraction(0) for name in hard_of(quota)}


def tally(quota: Obj, group: str, resource: str, objects: Iterable[Obj], used: Usage) -> None:
    """Add what `objects` (of one resource) cost against `quota` to `used`: the quota
    controller's recalculation, shared by the controller and the admission plugin."""
    for obj in objects:
        if not scopes_match(quota, group, resource, obj):
            continue
        for name, amount in usage(group, resource, obj).items():
            if name in used:
                used[name] += amount


def scopes_match(quota: Obj, group: str, resource: str, obj: Obj) -> bool:
    """Whether `quota`'s scopes select `obj` (unscoped quotas select everything)."""
    spec = quota.get("spec") or {}
    scopes = spec.get("scopes") or []
    if spec.get("scopeSelector"):
        return False
    if not scopes:
        return True
    if group or resource != "pods" or any(s not in KNOWN_SCOPES for s in scopes):
        return False
    pod_spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    terminating = pod_spec.get("activeDeadlineSeconds") is not None
    best_effort = qos_class(obj) == "BestEffort"
    wanted = {"Terminating": terminating, "NotTerminating": not terminating,
              "BestEffort": best_effort, "NotBestEffort": not best_effort}
    return all(wanted[s] for s in scopes)


def hard_of(quota: Obj) -> dict[str, Any]:
    hard = (quota.get("spec") or {}).get("hard")
    return hard if isinstance(hard, dict) else {}


def used_of(quota: Obj) -> dict[str, Any] | None:
    """status.used when it covers every hard name, else None (it must be recomputed)."""
    used = (quota.get("status") or {}).get("used")
    if not isinstance(used, dict) or any(name not in used for name in hard_of(quota)):
        return None
    return used


def missing_requests(pod: Obj, hard: dict[str, Any]) -> str | None:
    """Upstream podEvaluator.Constraints: a quota on cpu/memory needs every container (init
    containers too) to state it, named as the quota names it;
    `must specify limits.cpu for: a; requests.cpu for: a,b` or None."""
    missing: dict[str, set[str]] = {}
    for name in hard:
        if name not in POD_REQUIRED:
            continue
        kind, res = POD_COMPUTE[name]
        for container in _containers(pod, "containers") + _containers(pod, "initContainers"):
            if _amount(container, kind, res) is None:
                missing.setdefault(name, set()).add(str(container.get("name", "")))
    if not missing:
        return None
    parts = [f"{name} for: {','.join(sorted(names))}" for name, names in sorted(missing.items())]
    return "must specify " + "; ".join(parts)


def _format(amount: Fraction, like: Any) -> str:
    try:
        fmt = quantity.parse(like).format
    except ValueError:
        fmt = quantity.DECIMAL_SI
    return quantity.format_quantity(amount, fmt)


def pretty(values: dict[str, Fraction], hard: dict[str, Any]) -> str:
    """Upstream prettyPrint: `name=value` sorted by name, joined by commas."""
    return ",".join(f"{name}={_format(values[name], hard.get(name, 0))}" for name in sorted(values))


def check(quota: Obj, used: Usage, delta: Usage) -> tuple[Usage | None, str | None]:
    """(new used, None) when `delta` fits `quota` given `used`; (None, reason) when it does
    not; (None, None) when the quota does not track anything in `delta`."""
    hard = hard_of(quota)
    requested = {name: amount for name, amount in delta.items() if name in hard and amount}
    if not requested:
        return None, None
    new_used = {name: used.get(name, Fraction(0)) for name in hard}
    for name, amount in requested.items():
        new_used[name] += amount
    exceeded = sorted(name for name in requested if new_used[name] > _value(hard[name]))
    if exceeded:
        name = (quota.get("metadata") or {}).get("name", "")
        return None, (f"exceeded quota: {name}, "
                      f"requested: {pretty({k: requested[k] for k in exceeded}, hard)}, "
                      f"used: {pretty({k: used.get(k, Fraction(0)) for k in exceeded}, hard)}, "
                      f"limited: {pretty({k: _value(hard[k]) for k in exceeded}, hard)}")
    return new_used, None


def status_for(quota: Obj, used: Usage) -> Obj:
    """The quota status to store: hard mirrors spec.hard, used in the same formats."""
    hard = hard_of(quota)
    return {"hard": dict(hard),
            "used": {name: _format(used.get(name, Fraction(0)), hard[name]) for name in hard}}


def parse_used(used: dict[str, Any]) -> Usage:
    return {name: _value(raw) for name, raw in used.items()}
