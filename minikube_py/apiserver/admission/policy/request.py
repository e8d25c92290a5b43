"""One admission request as the policies see it: matching view, old object, namespace, CEL's
`request`.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/plugin/cel (CreateAdmissionRequest,
CreateNamespaceObject) and admission.VersionedAttributes (the object as validating admission
sees it: defaulted, with the old object of an UPDATE or DELETE). Everything is built lazily and
at most once per request: the old object and the namespace are read only when some policy's
rules match, so a request no policy is about costs one small object.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import TYPE_CHECKING, Any

from ....api import errors
from ....api.defaults import apply_defaults
from ....registry import codec
from ..chain import Attributes
from ..informer import StoreInformer
from . import matching

if TYPE_CHECKING:
    from ....registry.generic import Registry
    from ..lookup import RegistryLookup

Obj = dict[str, Any]


class PolicyAttributes:
    """One request's view for the policies: built lazily, at most once (the old object and
    the namespace are read only when some policy's rules match)."""

    def __init__(self, attrs: Attributes, lookup: RegistryLookup, namespaces: StoreInformer,
                 namespace_registry: Registry) -> None:
        self.attrs = attrs
        self._lookup = lookup
        self._namespaces = namespaces
        self._namespace_registry = namespace_registry
        strategy = attrs.strategy
        sub = strategy.subresource(attrs.subresource) if attrs.subresource else None
        self.kind = {"group": strategy.group if sub is None or sub.group is None else sub.group,
                     "version": strategy.version if sub is None or sub.version is None
                     else sub.version,
                     "kind": (sub.kind if sub is not None and sub.kind else strategy.kind)}
        self.bare = matching.PolicyRequest(
            attrs.operation, strategy.group, strategy.version, strategy.resource,
            attrs.subresource, self.kind["kind"], attrs.namespace, attrs.name,
            obj=attrs.obj, old_obj=attrs.old_obj)
        self._versions: tuple[str, ...] | None = None
        self._full: matching.PolicyRequest | None = None
        self._request: Obj | None = None
        self._namespace: Obj | None = None

    def versions(self) -> tuple[str, ...]:
        """Every version the resource is served in (read once, and only when a policy with
        matchPolicy Equivalent did not match the request's own version)."""
        if self._versions is None:
            strategy = self.attrs.strategy
            self._versions = self._lookup.versions(strategy.group, strategy.resource)
        return self._versions

    async def full(self) -> matching.PolicyRequest:
        """The request as validating admission sees it upstream: the object defaulted (the
        scheme defaults it when decoding), and the old object (a PUT or DELETE reads it once)."""
        if self._full is None:
            old = self.attrs.old_obj
            if old is None and self.attrs.operation in ("UPDATE", "DELETE"):
                old = await self._current()
            obj = self.attrs.obj
            if isinstance(obj, dict) and not self.attrs.subresource:
                obj = codec.clone(obj)
                apply_defaults(self.attrs.strategy.kind, obj, self.attrs.strategy.group)
            self._full = dataclasses.replace(self.bare, obj=obj, old_obj=old)
        return self._full

    async def _current(self) -> Obj | None:
        strategy = self.attrs.strategy
        registry = self._lookup(strategy.group, strategy.resource)
        if registry is None:
            return None
        try:
            return await registry.get(self.attrs.namespace, self.attrs.name)
        except errors.StatusError:
            return None

    async def namespace_object(self) -> Obj | None:
        """The request's namespace from the informer; one read when the informer has not
        seen it yet (upstream's matcher falls back to a live lookup the same way)."""
        if not self.attrs.namespace or self.bare.is_namespace:
            return None
        if self._namespace is None:
            self._namespace = self._namespaces.by_name("", self.attrs.namespace)
            if self._namespace is None:
                try:
                    self._namespace = await self._namespace_registry.get(
                        "", self.attrs.namespace)
                except errors.StatusError:
                    self._namespace = {}
        return self._namespace or None

    async def namespace_labels(self) -> dict[str, str] | None:
        ns = await self.namespace_object()
        labels = ((ns or {}).get("metadata") or {}).get("labels")
        return labels if isinstance(labels, dict) else None

    async def activation(self, param: Obj | None) -> dict[str, Any]:
        req = self._full or self.bare
        if self._request is None:
            self._request = self._admission_request()
        ns = await self.namespace_object()
        return {"object": req.obj if self.attrs.operation != "DELETE" else None,
                "oldObject": req.old_obj if self.attrs.operation in ("UPDATE", "DELETE")
                else None,
                "request": self._request, "params": param,
                "namespaceObject": _namespace_view(ns) if ns is not None else None}

    def _admission_request(self) -> Obj:
        """upstream CreateAdmissionRequest, as CEL's `request` sees it."""
        strategy = self.attrs.strategy
        resource = {"group": strategy.group, "version": strategy.version,
                    "resource": strategy.resource}
        user = self.attrs.user
        user_info: Obj = ({"username": user.name, "uid": user.uid, "groups": list(user.groups),
                           "extra": {key: list(values) for key, values in user.extra.items()}}
                          if user is not None else {})
        return {"uid": str(uuid.uuid4()), "kind": self.kind, "resource": resource,
                "subResource": self.attrs.subresource, "requestKind": self.kind,
                "requestResource": resource, "requestSubResource": self.attrs.subresource,
                "name": self.attrs.name, "namespace": self.attrs.namespace,
                "operation": self.attrs.operation, "userInfo": user_info,
                "dryRun": self.attrs.dry_run}


def _namespace_view(ns: Obj) -> Obj:
    """upstream CreateNamespaceObject: the namespace's identifying metadata, spec, status."""
    md = ns.get("metadata") or {}
    kept = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation",
            "creationTimestamp", "deletionTimestamp", "labels", "annotations")
    return {"metadata": {k: md[k] for k in kept if k in md},
            "spec": ns.get("spec") or {}, "status": ns.get("status") or {}}
