"""Does a pod's node selection admit a node? One node, one pod, no tables.

Kubernetes piece: k8s.io/component-helpers/scheduling/corev1/nodeaffinity
(GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector AND the required node affinity
terms, OR-ed, each term's matchExpressions over labels AND matchFields over metadata.name) and
k8s.io/component-helpers/scheduling/corev1 FindMatchingUntoleratedTaint. The scheduler has its
own vectorised form over a node table; the DaemonSet controller asks the same question for a
single pod and node, which this answers directly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minikube_py.api import labels
from minikube_py.api.taints import Taint, pod_tolerations, taint_of, tolerates

Obj = dict[str, Any]

_OPERATORS = {
    "In": labels.Operator.IN, "NotIn": labels.Operator.NOT_IN,
    "Exists": labels.Operator.EXISTS, "DoesNotExist": labels.Operator.DOES_NOT_EXIST,
    "Gt": labels.Operator.GREATER_THAN, "Lt": labels.Operator.LESS_THAN,
}


def _term_matches(term: Any, node_labels: dict[str, str], node_name: str) -> bool:
    """One NodeSelectorTerm; an empty or unparsable one matches nothing (upstream skips it)."""
    if not isinstance(term, dict):
        return False
    expressions = term.get("matchExpressions") or ()
    fields = term.get("matchFields") or ()
    if not expressions and not fields:
        return False
    try:
        for expr in expressions:
            op = _OPERATORS[expr.get("operator")]
            requirement = labels.new_requirement(expr.get("key") or "", op,
                                                 expr.get("values") or ())
            if not requirement.matches(node_labels):
                return False
        for expr in fields:
            values = expr.get("values") or ()
            if expr.get("key") != "metadata.name" or len(values) != 1:
                return False
            if expr.get("operator") == "In":
                if node_name != values[0]:
                    return False
            elif expr.get("operator") == "NotIn":
                if node_name == values[0]:
                    return False
            else:
                return False
    except Exception:  # noqa: BLE001 - a malformed term is "regarded as not match"
        return False
    return True


def required_affinity_matches(pod_spec: Obj, node: Obj) -> bool:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)."""
    md = node.get("metadata") or {}
    node_labels = md.get("labels") or {}
    selector = pod_spec.get("nodeSelector") or {}
    if isinstance(selector, dict) and any(node_labels.get(k) != v for k, v in selector.items()):
        return False
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    name = md.get("name", "")
    return any(_term_matches(t, node_labels, name) for t in required.get("nodeSelectorTerms") or ())


def node_selector_matches(selector: Any, node: Obj) -> bool:
    """A NodeSelector (terms OR-ed) against one node: component-helpers'
    MatchNodeSelectorTerms, which a PersistentVolume's required nodeAffinity is checked with
    (volume CheckNodeAffinity)."""
    if not isinstance(selector, dict):
        return False
    md = node.get("metadata") or {}
    node_labels = md.get("labels") or {}
    name = md.get("name", "")
    return any(_term_matches(t, node_labels, name)
               for t in selector.get("nodeSelectorTerms") or ())


def node_taints(node: Obj) -> list[Taint]:
    return [taint_of(t) for t in (node.get("spec") or {}).get("taints") or ()
            if isinstance(t, dict)]


def find_untolerated_taint(taints: list[Taint], pod_spec: Obj,
                           include: Callable[[Taint], bool]) -> Taint | None:
    """The first taint `include` selects that no toleration of the pod tolerates."""
    if not taints:
        return None
    tolerations = pod_tolerations(pod_spec)
    for taint in taints:
        if include(taint) and not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None
