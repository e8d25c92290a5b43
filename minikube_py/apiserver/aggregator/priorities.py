"""Which group and version discovery lists first: APIService priorities.

Kubernetes pieces: pkg/controlplane/apiserver/aggregator.go's `apiVersionPriorities` (the
GroupPriorityMinimum/VersionPriority of every built-in group version, given to the local
APIServices the autoregister controller creates), crdregistration_controller.go (a CRD's group
versions get 1000/100) and kube-aggregator's apiregistration/v1/helper (SortedByGroupAndVersion:
groups by their highest GroupPriorityMinimum, then APIService name; versions by
VersionPriority, then upstream's kube-aware version order — GA before beta before alpha, higher
numbers first). Pure functions; `/apis` and the aggregated discovery document both use them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple


class Priority(NamedTuple):
    group: int  # GroupPriorityMinimum
    version: int  # VersionPriority


#: upstream's table (1.31) for the groups this project serves or may serve
BUILT_IN: dict[tuple[str, str], Priority] = {
    ("", "v1"): Priority(18000, 1),
    ("apiregistration.k8s.io", "v1"): Priority(18000, 15),
    ("apps", "v1"): Priority(17800, 15),
    ("events.k8s.io", "v1"): Priority(17750, 15),
    ("authentication.k8s.io", "v1"): Priority(17700, 15),
    ("authorization.k8s.io", "v1"): Priority(17600, 15),
    ("autoscaling", "v1"): Priority(17500, 15),
    ("autoscaling", "v2"): Priority(17500, 30),
    ("batch", "v1"): Priority(17400, 15),
    ("certificates.k8s.io", "v1"): Priority(17300, 15),
    ("networking.k8s.io", "v1"): Priority(17200, 15),
    ("policy", "v1"): Priority(17100, 15),
    ("rbac.authorization.k8s.io", "v1"): Priority(17000, 15),
    ("storage.k8s.io", "v1"): Priority(16800, 15),
    ("apiextensions.k8s.io", "v1"): Priority(16700, 15),
    ("admissionregistration.k8s.io", "v1"): Priority(16700, 15),
    ("scheduling.k8s.io", "v1"): Priority(16600, 15),
    ("coordination.k8s.io", "v1"): Priority(16500, 15),
    ("node.k8s.io", "v1"): Priority(16300, 15),
    ("discovery.k8s.io", "v1"): Priority(16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): Priority(16100, 21),
    # not kube-apiserver's: metrics-server's own APIService manifest (the built-in one here)
    ("metrics.k8s.io", "v1beta1"): Priority(100, 100),
}
#: a CRD's group version (crdregistration_controller.go)
CUSTOM = Priority(1000, 100)
#: a built-in group version missing from the table (upstream would refuse to start)
OTHER = Priority(1000, 15)

_KUBE_VERSION = re.compile(r"^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$")
_STAGE = {None: 2, "beta": 1, "alpha": 0}


def local_priority(group: str, version: str, custom: bool) -> Priority:
    if custom:
        return CUSTOM
    return BUILT_IN.get((group, version), OTHER)


def kube_version_key(version: str) -> tuple:
    """Sort key for upstream's CompareKubeAwareVersionStrings (ascending = preferred first):
    v10, v2, v1, v11beta2, v10beta3, v3beta1, v12alpha1, v11alpha2, foo1, foo10."""
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (1, version)
    major, stage, minor = match.groups()
    return (0, -_STAGE[stage], -int(major), -int(minor or 0))


class Entry(NamedTuple):
    """One APIService as ordering sees it."""
    group: str
    version: str
    priority: Priority


def ordered_groups(entries: Iterable[Entry]) -> dict[str, list[str]]:
    """group -> its versions, preferred first, groups in discovery order
    (SortedByGroupAndVersion; the APIService name `<version>.<group>` breaks group ties)."""
    by_group: dict[str, list[Entry]] = {}
    for entry in entries:
        by_group.setdefault(entry.group, []).append(entry)

    def group_key(item: tuple[str, list[Entry]]) -> tuple:
        first = min(item[1], key=lambda e: (-e.priority.group, f"{e.version}.{e.group}"))
        return (-first.priority.group, f"{first.version}.{first.group}")

    return {group: [e.version for e in sorted(
                versions, key=lambda e: (-e.priority.version, kube_version_key(e.version)))]
            for group, versions in sorted(by_group.items(), key=group_key)}
