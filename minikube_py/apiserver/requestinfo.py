"""What a request is about: verb, group/version, namespace, resource, name, subresource.

Kubernetes piece: pkg/apiserver's RequestInfoResolver (v1.0 `APIRequestInfoResolver`, later
k8s.io/apiserver/pkg/endpoints/request/requestinfo.go). Parsed once per request by a filter, so
metrics, logging, admission and the handlers all agree on what the request was.

URL shapes (after /api/v1 or /apis/<group>/<version>):
    <resource>[/<name>[/<subresource>]]                          cluster scope / all namespaces
    namespaces/<namespace>/<resource>[/<name>[/<subresource>]]   namespaced
    watch/...                                                     legacy watch prefix

The verb comes from the HTTP method as upstream's resolver maps it — POST create, GET and HEAD
get, PUT update, PATCH patch, DELETE delete, any other method (OPTIONS, ...) the empty verb —
then, without a name, get becomes list (or watch) and delete deletecollection. That mapping is
also what authorizes a connect subresource: `pods/{name}/proxy` (and `services/`, `nodes/`)
is get, create, update, patch or delete by the proxied request's method, never a verb of its
own. One addition of ours: `?watch=true` on a named object (not a subresource) is a watch of
that object, which our handlers serve.
"""

from __future__ import annotations

from dataclasses import dataclass

#: upstream's method -> verb switch; any other method resolves to the empty verb
_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update",
                 "PATCH": "patch", "DELETE": "delete"}
#: without a name, these verbs mean the collection
_COLLECTION_VERBS = {"get": "list", "delete": "deletecollection"}
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
    verb = _METHOD_VERBS.get(method, "")
    if not name:
        verb = _COLLECTION_VERBS.get(verb, verb)
    if watch and verb in ("get", "list") and not subresource:
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
