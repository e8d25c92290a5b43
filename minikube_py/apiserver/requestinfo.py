"""What a request is about: verb, group/version, namespace, resource, name, subresource.

Kubernetes piece: pkg/apiserver's RequestInfoResolver (v1.0 `APIRequestInfoResolver`, later
k8s.io/apiserver/pkg/endpoints/request/requestinfo.go). Parsed once per request by a filter, so
metrics, logging, admission and the handlers all agree on what the request was.

URL shapes (after /api/v1 or /apis/<group>/<version>):
    <resource>[/<name>[/<subresource>]]                          cluster scope / all namespaces
    namespaces/<namespace>/<resource>[/<name>[/<subresource>]]   namespaced
    watch/...                                                     legacy watch prefix
"""

from __future__ import annotations

from dataclasses import dataclass

_LIST_VERBS = {"GET": "list", "POST": "create", "DELETE": "deletecollection"}
_ITEM_VERBS = {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete",
               "POST": "create"}
#: subresources of a namespace object, not resources inside it
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass(frozen=True, slots=True)
class RequestInfo:
    is_resource: bool
    verb: str
    path: str
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    name: str = ""
    subresource: str = ""
    extra: tuple[str, ...] = ()  # path parts after the subresource (proxy paths)

    @property
    def long_running(self) -> bool:
        return self.verb == "watch" or self.subresource in ("log", "exec", "attach", "portforward",
                                                            "proxy")


def resolve(method: str, path: str, query_watch: bool) -> RequestInfo:
    """Parse a request path; non-API paths (/healthz, /version) get is_resource False."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return RequestInfo(False, method.lower(), path)
    watch = query_watch
    if rest and rest[0] == "watch":
        watch, rest = True, rest[1:]
    if not rest:
        return RequestInfo(False, method.lower(), path, group, version)
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in _NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    elif rest[0] == "namespaces" and len(rest) >= 2:
        namespace = rest[1]  # the namespace object itself (or its status/finalize)
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    extra = tuple(rest[3:])
    if name:
        verb = _ITEM_VERBS.get(method, method.lower())
        if verb == "get" and watch:
            verb = "watch"
    else:
        verb = _LIST_VERBS.get(method, method.lower())
        if verb == "list" and watch:
            verb = "watch"
    return RequestInfo(True, verb, path, group, version, namespace, resource, name, subresource,
                       extra)


_CACHE: dict[tuple[str, str, bool], RequestInfo] = {}
_CACHE_MAX = 4096


def resolve_cached(method: str, path: str, query_watch: bool) -> RequestInfo:
    """`resolve`, memoised: clients repeat the same paths (a kubelet its node, a controller
    its lists), and a RequestInfo is immutable."""
    key = (method, path, query_watch)
    info = _CACHE.get(key)
    if info is None:
        info = resolve(method, path, query_watch)
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[key] = info
    return info
