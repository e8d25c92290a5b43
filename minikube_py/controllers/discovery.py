"""Which resources the API server serves, read from its discovery documents.

Kubernetes piece: client-go discovery (ServerPreferredResources, ServerPreferredNamespaced-
Resources, the verbs filter) as the namespace controller and the garbage collector use it:
they must handle every resource the server has — including ones added after they were
written — so they ask the server instead of keeping a list.
"""

from __future__ import annotations

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


async def server_preferred_resources(client: Client) -> list[APIResource]:
    """Every resource of the core group's versions and of each group's preferred version."""
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
