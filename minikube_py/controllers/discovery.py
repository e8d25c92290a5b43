"""Which resources the API server serves, read from its discovery documents.

Kubernetes piece: client-go discovery (ServerPreferredResources, ServerPreferredNamespaced-
Resources, the verbs filter) as the namespace controller and the garbage collector use it:
they must handle every resource the server has — including ones added after they were
written — so they ask the server instead of keeping a list.

They ask as client-go 1.30+ does: aggregated discovery (apidiscovery.k8s.io/v2, KEP-3352) —
`/api` and `/apis` with every group's resources in two answers — instead of `/api`, `/apis`
and one request per group version (~25 here). A server that does not answer in that form
gets the per-group-version requests, and so does a group version the aggregated answer marks
Stale (an aggregated API server whose document the API server has not fetched: its own
`/apis/<group>/<version>` is proxied to it).
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from ..client import Client
from ..client.resources import Resource

Obj = dict[str, Any]


class APIResource(NamedTuple):
    resource: Resource
    verbs: frozenset[str]


def parse_resource_list(doc: Obj) -> list[APIResource]:
    """An APIResourceList -> its resources (subresources such as `pods/status` skipped)."""
    group_version = doc.get("groupVersion") or "v1"
    group, _, version = group_version.rpartition("/")
    out = []
    for entry in doc.get("resources") or ():
        name = entry.get("name") or ""
        if not name or "/" in name:
            continue
        out.append(APIResource(Resource(group, version, name, bool(entry.get("namespaced")),
                                        entry.get("kind") or ""),
                               frozenset(entry.get("verbs") or ())))
    return out


#: what client-go's discovery client sends: aggregated v2, else the plain documents
AGGREGATED_ACCEPT = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                     "application/json")


def parse_aggregated_version(group: str, entry: Obj) -> list[APIResource]:
    """One `versions[]` entry of an APIGroupDiscovery -> its resources (subresources are
    listed inside each resource there, so nothing to skip)."""
    version = entry.get("version") or ""
    out = []
    for r in entry.get("resources") or ():
        name = r.get("resource") or ""
        if not name:
            continue
        kind = (r.get("responseKind") or {}).get("kind") or ""
        out.append(APIResource(Resource(group, version, name, r.get("scope") == "Namespaced",
                                        kind), frozenset(r.get("verbs") or ())))
    return out


def preferred_from_aggregated(doc: Obj) -> tuple[list[APIResource], list[str]]:
    """An APIGroupDiscoveryList -> the resources of the core group's versions and of each
    named group's preferred (first) version, and the group versions (`group/version`) marked
    Stale, whose resources must be read from their own document."""
    resources: list[APIResource] = []
    stale: list[str] = []
    for item in doc.get("items") or ():
        group = (item.get("metadata") or {}).get("name") or ""
        versions = item.get("versions") or []
        for entry in versions if not group else versions[:1]:
            if entry.get("freshness", "Current") != "Current":
                stale.append(f"{group}/{entry.get('version')}".lstrip("/"))
                continue
            resources += parse_aggregated_version(group, entry)
    return resources, stale


async def _aggregated(client: Client, path: str) -> Obj | None:
    doc = await client.get_path(path, accept=AGGREGATED_ACCEPT)
    return doc if doc.get("kind") == "APIGroupDiscoveryList" else None


async def server_preferred_resources(client: Client) -> list[APIResource]:
    """Every resource of the core group's versions and of each group's preferred version."""
    core, named = await _aggregated(client, "/api"), await _aggregated(client, "/apis")
    if core is None or named is None:
        return await _per_group_version(client)
    items = [*(core.get("items") or ()), *(named.get("items") or ())]
    resources, stale = preferred_from_aggregated({"items": items})
    for group_version in stale:
        prefix = "/api" if "/" not in group_version else "/apis"
        resources += parse_resource_list(await client.get_path(f"{prefix}/{group_version}"))
    return resources


async def _per_group_version(client: Client) -> list[APIResource]:
    """The pre-aggregation way: /api, /apis, then each group version's APIResourceList."""
    docs = [await client.get_path(f"/api/{v}")
            for v in (await client.get_path("/api")).get("versions") or ()]
    for group in (await client.get_path("/apis")).get("groups") or ():
        preferred = (group.get("preferredVersion") or {}).get("groupVersion")
        if preferred:
            docs.append(await client.get_path(f"/apis/{preferred}"))
    return [r for doc in docs for r in parse_resource_list(doc)]


def with_verbs(resources: list[APIResource], *verbs: str,
               namespaced: bool | None = None) -> list[APIResource]:
    """upstream discovery.FilteredBy(SupportsAllVerbs{...}) (and the namespaced filter)."""
    need = frozenset(verbs)
    return [r for r in resources if need <= r.verbs
            and (namespaced is None or r.resource.namespaced == namespaced)]


class DiscoveredResources:
    """The server's resources by (group, plural) and by (apiVersion, kind), from discovery.

    Upstream's controllers map kinds through a deferred discovery RESTMapper that re-reads
    discovery when asked about something it does not know: a CRD created after the
    controller started is found on first use. Here the same, with a floor on how often a miss
    may re-read (`min_interval` seconds), so a quota naming a resource that does not exist
    cannot turn every sync into a round of discovery requests."""

    def __init__(self, client: Client, min_interval: float = 1.0) -> None:
        self._client = client
        self.min_interval = min_interval
        self._read_at: float | None = None
        self.resources: list[APIResource] = []
        self._by_plural: dict[tuple[str, str], Resource] = {}
        self._by_kind: dict[tuple[str, str], Resource] = {}

    async def refresh(self) -> list[APIResource]:
        """Read discovery now (upstream's mapper Reset)."""
        self._read_at = time.monotonic()
        self.resources = await server_preferred_resources(self._client)
        self._by_plural = {(r.resource.group, r.resource.plural): r.resource
                           for r in self.resources}
        self._by_kind = {(r.resource.api_version, r.resource.kind): r.resource
                         for r in self.resources}
        return self.resources

    async def _refresh_on_miss(self) -> bool:
        if self._read_at is not None and time.monotonic() - self._read_at < self.min_interval:
            return False
        await self.refresh()
        return True

    async def by_plural(self, group: str, plural: str) -> Resource | None:
        found = self._by_plural.get((group, plural))
        if found is None and await self._refresh_on_miss():
            found = self._by_plural.get((group, plural))
        return found

    async def by_kind(self, api_version: str, kind: str) -> Resource | None:
        found = self._by_kind.get((api_version, kind))
        if found is None and await self._refresh_on_miss():
            found = self._by_kind.get((api_version, kind))
        return found
