"""What a RuntimeClass does to a pod: overhead and scheduling constraints (pure).

Kubernetes pieces: plugin/pkg/admission/runtimeclass (setOverhead, setScheduling,
validateOverhead) and pkg/util/tolerations (MergeTolerations, isSuperset). The admission plugin
(apiserver/admission/runtime_class.py) does the lookup; these functions decide. Each returns the
Forbidden reason when the pod disagrees with its class, or None after mutating the pod spec.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.quantity import parse_quantity

Obj = dict[str, Any]

OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
OVERHEAD_WITHOUT_CLASS = ("pod rejected: Pod Overhead set without corresponding RuntimeClass "
                          "defined Overhead")


def _quantities_equal(a: Any, b: Any) -> bool:
    """apiequality.Semantic on ResourceLists: quantities compare by value ("1" == "1000m")."""
    if not isinstance(a, dict) or not isinstance(b, dict) or a.keys() != b.keys():
        return a == b
    try:
        return all(parse_quantity(str(a[k])) == parse_quantity(str(b[k])) for k in a)
    except (ValueError, TypeError):
        return a == b


def pod_fixed(runtime_class: Obj | None) -> Obj | None:
    overhead = (runtime_class or {}).get("overhead")
    fixed = overhead.get("podFixed") if isinstance(overhead, dict) else None
    return fixed if isinstance(fixed, dict) else None


def set_overhead(spec: Obj, runtime_class: Obj | None) -> str | None:
    """Mutating half: copy the class's podFixed into spec.overhead (a different one: reject)."""
    fixed = pod_fixed(runtime_class)
    if fixed is None:
        return None
    current = spec.get("overhead")
    if current is not None and not _quantities_equal(current, fixed):
        return OVERHEAD_MISMATCH
    spec["overhead"] = dict(fixed)
    return None


def validate_overhead(spec: Obj, runtime_class: Obj | None) -> str | None:
    """Validating half: the pod's overhead is exactly its class's (none without one)."""
    fixed = pod_fixed(runtime_class)
    if fixed is not None:
        return None if _quantities_equal(fixed, spec.get("overhead")) else OVERHEAD_MISMATCH
    return OVERHEAD_WITHOUT_CLASS if spec.get("overhead") is not None else None


def _toleration(t: Any) -> Obj:
    return t if isinstance(t, dict) else {}


def _same(a: Obj, b: Obj) -> bool:
    keys = ("key", "operator", "value", "effect", "tolerationSeconds")
    return all((a.get(k) or None) == (b.get(k) or None) for k in keys)


def is_superset(ss: Obj, t: Obj) -> bool:
    """Whether toleration `ss` tolerates everything `t` does (upstream isSuperset)."""
    if _same(ss, t):
        return True
    if (t.get("key") or "") != (ss.get("key") or "") and \
            ((ss.get("key") or "") != "" or ss.get("operator") != "Exists"):
        return False
    if (t.get("effect") or "") != (ss.get("effect") or "") and ss.get("effect"):
        return False
    if ss.get("effect") == "NoExecute" and ss.get("tolerationSeconds") is not None:
        seconds = t.get("tolerationSeconds")
        if seconds is None or seconds > ss["tolerationSeconds"]:
            return False
    operator = ss.get("operator") or "Equal"
    if operator == "Equal":
        return (t.get("operator") or "Equal") == "Equal" and \
            (t.get("value") or "") == (ss.get("value") or "")
    return operator == "Exists"


def merge_tolerations(first: list, second: list) -> list:
    """MergeTolerations: both lists, dropping any toleration another one subsumes (of two
    equal ones the first is kept)."""
    every = [_toleration(t) for t in (*first, *second)]
    merged: list[Obj] = []
    for i, t in enumerate(every):
        if any(is_superset(kept, t) for kept in merged):
            continue
        if any(not _same(t, later) and is_superset(later, t) for later in every[i + 1:]):
            continue
        merged.append(t)
    return merged


def set_scheduling(spec: Obj, runtime_class: Obj | None) -> str | None:
    """Merge scheduling.nodeSelector (a conflicting pod value: reject) and tolerations."""
    scheduling = (runtime_class or {}).get("scheduling")
    if not isinstance(scheduling, dict):
        return None
    selector = scheduling.get("nodeSelector") if isinstance(scheduling.get("nodeSelector"),
                                                            dict) else {}
    pod_selector = spec.get("nodeSelector")
    if not isinstance(pod_selector, dict):
        new_selector = dict(selector) if selector else pod_selector
    else:
        new_selector = dict(pod_selector)
        for key, value in selector.items():
            if key in new_selector and new_selector[key] != value:
                return (f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                        f"pod.spec.nodeSelector[{key}] = {new_selector[key]}")
            new_selector[key] = value
    if new_selector is not None:
        spec["nodeSelector"] = new_selector
    tolerations = scheduling.get("tolerations") if isinstance(scheduling.get("tolerations"),
                                                              list) else []
    pod_tolerations = spec.get("tolerations") if isinstance(spec.get("tolerations"), list) else []
    merged = merge_tolerations(pod_tolerations, tolerations)
    if merged or "tolerations" in spec:
        spec["tolerations"] = merged
    return None
