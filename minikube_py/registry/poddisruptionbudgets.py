"""PodDisruptionBudgets (policy/v1): how many of an application's pods may be down at once.

Kubernetes piece: pkg/registry/policy/poddisruptionbudget (strategy.go, storage/storage.go):
namespaced, short name `pdb`, a `status` subresource the disruption controller and the
eviction subresource write. PrepareForCreate clears the status (generation 1);
PrepareForUpdate keeps it and bumps the generation when the spec changes — which is what makes
the eviction subresource answer 429 until the controller has observed the new spec.
"""

from __future__ import annotations

from typing import Any

from .strategy import Strategy, SubresourceSpec


async def _reset_status(registry: Any, obj: dict[str, Any]) -> None:
    obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                     "expectedPods": 0}


POD_DISRUPTION_BUDGETS = Strategy(
    group="policy", version="v1", resource="poddisruptionbudgets", kind="PodDisruptionBudget",
    namespaced=True, key_root="poddisruptionbudgets", short_names=("pdb",),
    subresources=(SubresourceSpec("status", ("get", "patch", "update")),), has_status=True,
    prepare_create=_reset_status,
)

#: pods/eviction as discovery lists it: a policy/v1 Eviction is POSTed (kubectl drain finds
#: it by the group and version here)
EVICTION = SubresourceSpec("eviction", ("create",), kind="Eviction", group="policy",
                           version="v1")
