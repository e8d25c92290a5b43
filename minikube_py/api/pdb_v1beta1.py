"""policy/v1beta1 PodDisruptionBudgets as views of the stored policy/v1 objects.

Kubernetes piece: pkg/apis/policy/v1beta1/conversion.go and pkg/apis/policy/helper.go. The
two versions carry the same fields but read an empty selector differently: in v1beta1 `{}`
selects no pod, in v1 every pod. Upstream stores the internal (v1-shaped) form and swaps two
marker selectors at the edge, which this module does under upstream's label key:

- v1beta1 `{}` (match none) is stored as `Exists pdb.kubernetes.io/deprecated-v1beta1-
  empty-selector-match` (a requirement no pod satisfies), and read back as `{}`;
- v1 `{}` (match all) reads in v1beta1 as `DoesNotExist` on that key, which every pod
  satisfies, and is written back as `{}`.

Served only when --runtime-config enables policy/v1beta1 (removed upstream in 1.25): v1.20's
kube-scheduler (default preemption) and disruption controller list and watch this version.
Pure functions that never mutate their input.
"""

from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]
V1, V1BETA1 = "policy/v1", "policy/v1beta1"
#: upstream policy.PDBV1beta1Label
PDB_V1BETA1_LABEL = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"
#: policy.NonV1beta1MatchNoneSelector: what a v1beta1 empty selector is stored as
STORED_MATCH_NONE: Obj = {"matchExpressions": [{"key": PDB_V1BETA1_LABEL, "operator": "Exists"}]}
#: policy.V1beta1MatchAllSelector: how v1beta1 shows a stored (v1) empty selector
V1BETA1_MATCH_ALL: Obj = {"matchExpressions": [{"key": PDB_V1BETA1_LABEL,
                                                "operator": "DoesNotExist"}]}


def _swap_selector(obj: Obj, api_version: str, swaps: tuple[tuple[Obj, Obj], ...]) -> Obj:
    out = copy.deepcopy(obj)
    out["apiVersion"] = api_version
    spec = out.get("spec")
    if isinstance(spec, dict) and "selector" in spec:
        selector = spec["selector"]
        for old, new in swaps:
            if _same_selector(selector, old):
                spec["selector"] = copy.deepcopy(new)
                break
    return out


def _same_selector(selector: Any, other: Obj) -> bool:
    """Semantic equality of label selectors (apiequality.Semantic: an empty list or map is
    the same as an absent one)."""
    if not isinstance(selector, dict):
        return False
    keys = ("matchLabels", "matchExpressions")
    return all((selector.get(k) or None) == (other.get(k) or None) for k in keys) \
        and not (set(selector) - set(keys))


def to_v1(obj: Obj) -> Obj:
    """The stored (v1) form of a v1beta1 PDB."""
    return _swap_selector(obj, V1, (({}, STORED_MATCH_NONE), (V1BETA1_MATCH_ALL, {})))


def from_v1(obj: Obj) -> Obj:
    """The v1beta1 view of a stored (v1) PDB."""
    return _swap_selector(obj, V1BETA1, ((STORED_MATCH_NONE, {}), ({}, V1BETA1_MATCH_ALL)))
