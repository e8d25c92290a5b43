"""Discovery: /api, /apis, /api/v1, /apis/<group>/<version>, and aggregated discovery.

Kubernetes v1.0 piece: pkg/apiserver's APIVersionHandler / root `/api` and the resource lists
api_installer.go builds (v1.0 had only /api; /apis arrived with extensions in v1.1). kubectl
1.27+ fail every command if /apis is missing, and find resources (`po`, `cs`, `rc`) by the
shortNames listed here. Aggregated discovery (apidiscovery.k8s.io v2/v2beta1) saves newer
kubectl one request per group version; it is answered only when asked for, with the Content-
Type kubectl checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeVar

from ..registry.strategy import Strategy

_AGGREGATED = "application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"
_KUBE_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")
_STABILITY = {None: 0, "beta": 1, "alpha": 2}
V = TypeVar("V")


def version_priority(version: str) -> tuple:
    """Sort key of k8s.io/apimachinery's CompareKubeAwareVersionStrings, highest first:
    GA by major (v2, v1), then betas (v2beta1, v1beta2, v1beta1), then alphas, then anything
    else alphabetically (`foo1` < `foo10`)."""
    match = _KUBE_VERSION.fullmatch(version)
    if match is None:
        return (1, 0, 0, 0, version)
    major, stability, minor = match.groups()
    return (0, _STABILITY[stability], -int(major), -int(minor or 0), "")


def sort_versions(versions: dict[str, V]) -> dict[str, V]:
    """A group's versions in priority order: the first is the preferred version, as
    apiextensions-apiserver's discovery controller picks it for CRD groups."""
    return dict(sorted(versions.items(), key=lambda item: version_priority(item[0])))


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                            "serverAddress": server_address}]}


def _group_entry(group: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(groups: dict[str, list[str]]) -> dict[str, Any]:
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [_group_entry(g, vs) for g, vs in groups.items()]}


def api_group(group: str, versions: list[str]) -> dict[str, Any]:
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, versions)}


def resource_list(group_version: str, strategies: Iterable[Strategy]) -> dict[str, Any]:
    resources = []
    for s in strategies:
        entry: dict[str, Any] = {"name": s.resource, "singularName": s.singular_name,
                                 "namespaced": s.namespaced, "kind": s.kind,
                                 "verbs": sorted(s.verbs)}
        if s.short_names:
            entry["shortNames"] = list(s.short_names)
        if s.categories:
            entry["categories"] = list(s.categories)
        resources.append(entry)
        for sub in s.subresources:
            sub_entry: dict[str, Any] = {"name": f"{s.resource}/{sub.name}", "singularName": "",
                                         "namespaced": s.namespaced, "kind": sub.kind or s.kind,
                                         "verbs": sorted(sub.verbs)}
            if sub.group is not None:
                sub_entry["group"] = sub.group
                sub_entry["version"] = sub.version
            resources.append(sub_entry)
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
            "resources": resources}


def _aggregated_resource(s: Strategy) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": s.resource,
        "responseKind": {"group": s.group, "version": s.version, "kind": s.kind},
        "scope": "Namespaced" if s.namespaced else "Cluster",
        "singularResource": s.singular_name,
        "verbs": sorted(s.verbs),
    }
    if s.short_names:
        entry["shortNames"] = list(s.short_names)
    if s.categories:
        entry["categories"] = list(s.categories)
    if s.subresources:
        entry["subresources"] = [
            {"subresource": sub.name,
             "responseKind": {"group": sub.group if sub.group is not None else s.group,
                              "version": sub.version or s.version, "kind": sub.kind or s.kind},
             "verbs": sorted(sub.verbs)}
            for sub in s.subresources
        ]
    return entry


def aggregated(groups: dict[str, dict[str, list[Strategy]]], version: str) -> dict[str, Any]:
    """APIGroupDiscoveryList; `groups` maps group name ("" = core) -> version -> strategies."""
    items = []
    for group, versions in groups.items():
        items.append({
            "metadata": {"name": group, "creationTimestamp": None},
            "versions": [{"version": v, "freshness": "Current",
                          "resources": [_aggregated_resource(s) for s in ss]}
                         for v, ss in versions.items()],
        })
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}",
            "metadata": {}, "items": items}


def aggregated_version(accept: str | None) -> str | None:
    """The aggregated-discovery version the client asked for first, if any."""
    if not accept or "apidiscovery.k8s.io" not in accept:
        return None
    for part in accept.split(","):
        params = dict(p.strip().partition("=")[::2] for p in part.split(";")[1:])
        if params.get("g") == "apidiscovery.k8s.io" and params.get("as") == "APIGroupDiscoveryList":
            if params.get("v") in ("v2", "v2beta1"):
                return params["v"]
    return None


def aggregated_content_type(version: str) -> str:
    return _AGGREGATED.format(v=version)


