"""Aggregated APIs in discovery: what `/apis` and `/apis/<group>` say about them.

Kubernetes pieces: kube-aggregator's pkg/apiserver/handler_apis.go (the `/apis` group list and
the per-group APIGroup document are built from APIServices, not proxied; only
`/apis/<group>/<version>` goes to the backend) and pkg/apiserver/handler_discovery.go (the
aggregated discovery manager fetches each backend's document and converts a legacy
APIResourceList into APIGroupDiscovery form, marking a version `Stale` when the refresh
fails). The availability probe fetches the document; this module only converts. Pure.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def api_group(group: str, versions: list[str]) -> Obj:
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": entries,
            "preferredVersion": entries[0]}


def _kind(entry: Obj, group: str, version: str) -> Obj:
    return {"group": entry.get("group", group) if entry.get("group") is not None else group,
            "version": entry.get("version") or version, "kind": entry.get("kind", "")}


def aggregated_version(group: str, version: str, resource_list: Obj | None,
                       fresh: bool) -> Obj:
    """One `versions[]` entry of an APIGroupDiscovery from a backend's APIResourceList."""
    resources: list[Obj] = []
    by_name: dict[str, Obj] = {}
    entries = [r for r in (resource_list or {}).get("resources") or () if isinstance(r, dict)]
    for entry in entries:
        name = str(entry.get("name", ""))
        if "/" in name:
            continue
        out: Obj = {"resource": name, "responseKind": _kind(entry, group, version),
                    "scope": "Namespaced" if entry.get("namespaced") else "Cluster",
                    "singularResource": entry.get("singularName", ""),
                    "verbs": list(entry.get("verbs") or ())}
        for field in ("shortNames", "categories"):
            if entry.get(field):
                out[field] = list(entry[field])
        resources.append(out)
        by_name[name] = out
    for entry in entries:
        parent, _, sub = str(entry.get("name", "")).partition("/")
        if sub and parent in by_name:
            by_name[parent].setdefault("subresources", []).append(
                {"subresource": sub, "responseKind": _kind(entry, group, version),
                 "verbs": list(entry.get("verbs") or ())})
    return {"version": version, "resources": resources,
            "freshness": "Current" if fresh else "Stale"}
