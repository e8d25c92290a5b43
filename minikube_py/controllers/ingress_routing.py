"""Which backend an HTTP request goes to, given the Ingresses of one ingress class (pure).

Kubernetes piece: none in kubernetes/kubernetes (ingress controllers are out of tree); this is
the matching the Ingress API documents (concepts/services-networking/ingress: "Hostname
wildcards", "Path types", "Multiple matches") and that ingress-nginx implements:
- host: an exact rule host first, then a `*.example.com` wildcard (it matches exactly one more
  DNS label: `a.example.com`, not `example.com` or `b.a.example.com`), then rules without host;
- path: `Exact` matches the whole path; `Prefix` matches by `/`-separated elements (`/foo`
  matches `/foo` and `/foo/bar`, not `/foobar`); `ImplementationSpecific` is treated as Prefix
  here; the longest matching path wins, Exact before Prefix on equal length;
- nothing matches: the oldest Ingress's `defaultBackend`, else no backend (a 404).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

#: the class annotation older Ingresses use instead of spec.ingressClassName
CLASS_ANNOTATION = "kubernetes.io/ingress.class"


@dataclass(frozen=True)
class Backend:
    """A Service port an Ingress routes to (`port` is its number or name, as written)."""

    namespace: str
    service: str
    port: str
    ingress: str


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def of_class(ingress: Obj, class_name: str) -> bool:
    """Whether `ingress` belongs to the class (spec.ingressClassName, else the annotation)."""
    named = _dict(ingress.get("spec")).get("ingressClassName")
    if isinstance(named, str):
        return named == class_name
    annotations = _dict(_dict(ingress.get("metadata")).get("annotations"))
    return annotations.get(CLASS_ANNOTATION) == class_name


def host_rank(rule_host: str, host: str) -> int | None:
    """0 exact, 1 wildcard, 2 any host (no host in the rule), None no match."""
    if not rule_host:
        return 2
    if rule_host == host:
        return 0
    if rule_host.startswith("*.") and "." in host:
        first, rest = host.split(".", 1)
        return 1 if first and rest == rule_host[2:] else None
    return None


def path_score(path_type: str, rule_path: str, path: str) -> tuple[int, int] | None:
    """(matched length, 1 for Exact) or None."""
    rule_path = rule_path or "/"
    if path_type == "Exact":
        return (len(rule_path), 1) if path == rule_path else None
    prefix = rule_path.rstrip("/")
    if not prefix:  # "/" matches everything
        return (1, 0)
    if path == prefix or path.startswith(prefix + "/"):
        return (len(prefix), 0)
    return None


def _backend(ingress: Obj, backend: Any) -> Backend | None:
    service = _dict(_dict(backend).get("service"))
    port = _dict(service.get("port"))
    number, name = port.get("number"), port.get("name")
    if not service.get("name") or not (number or name):
        return None  # a resource backend: nothing to send HTTP to
    meta = _dict(ingress.get("metadata"))
    return Backend(str(meta.get("namespace") or "default"), str(service["name"]),
                   str(number or name), str(meta.get("name") or ""))


def _age_key(ingress: Obj) -> tuple[str, str, str]:
    meta = _dict(ingress.get("metadata"))
    return (str(meta.get("creationTimestamp") or ""), str(meta.get("namespace") or ""),
            str(meta.get("name") or ""))


def route(ingresses: list[Obj], host: str, path: str) -> Backend | None:
    """The backend for a request to `host` (no port) and `path` (no query)."""
    host = host.lower().rsplit(":", 1)[0] if host.count(":") == 1 else host.lower()
    best: tuple | None = None
    chosen: Backend | None = None
    for ingress in sorted(ingresses, key=_age_key):
        for rule in _list(_dict(ingress.get("spec")).get("rules")):
            rule = _dict(rule)
            rank = host_rank(str(rule.get("host") or ""), host)
            if rank is None:
                continue
            for item in _list(_dict(rule.get("http")).get("paths")):
                item = _dict(item)
                score = path_score(str(item.get("pathType") or "Prefix"),
                                   str(item.get("path") or "/"), path)
                if score is None:
                    continue
                key = (-rank, *score)
                if best is None or key > best:
                    backend = _backend(ingress, item.get("backend"))
                    if backend is not None:
                        best, chosen = key, backend
    if chosen is not None:
        return chosen
    for ingress in sorted(ingresses, key=_age_key):
        backend = _backend(ingress, _dict(ingress.get("spec")).get("defaultBackend"))
        if backend is not None:
            return backend
    return None
