"""One request as admission webhooks see it, and the AdmissionRequest made of it.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/plugin/webhook/generic's
VersionedAttributes (the object, defaulted, in the version the webhook's rule matched) and
request/admissionreview.go's CreateV1AdmissionReview (the AdmissionRequest's fields, the
`omitempty` ones left out). The old object and the namespace's labels cost a store read each,
so they are read lazily, once per request, by the first matching webhook that needs them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .... import offload
from ....api import errors, meta
from ....api.defaults import apply_defaults
from ....registry import codec
from ..chain import Attributes, PluginContext
from ..policy.matching import PolicyRequest
from . import rules

Obj = dict[str, Any]
NamespaceGetter = Callable[[str], Awaitable[Obj]]
#: the user of a request on the insecure port
_UNSECURED = {"username": "system:unsecured",
              "groups": ["system:masters", "system:authenticated"]}


class WebhookAttributes:
    """One admission call as the webhooks see it: what the rules match, the old object and
    the namespace's labels (read at most once, and only when a matching webhook needs them),
    the object in the matched version, and the AdmissionRequest built from all of it."""

    __slots__ = ("_context", "_defaulted", "_labels", "_namespace_get", "_old", "_old_read",
                 "_versions", "attrs", "dirty", "match", "namespace", "obj", "resource")

    def __init__(self, attrs: Attributes, context: PluginContext,
                 namespace_get: NamespaceGetter) -> None:
        self.attrs = attrs
        strategy = attrs.strategy
        self.resource = rules.GVR(strategy.group, strategy.version, strategy.resource)
        is_namespace = self.resource == rules.GVR("", "v1", "namespaces")
        self.namespace = attrs.name if is_namespace else attrs.namespace
        self.match = PolicyRequest(attrs.operation, strategy.group, strategy.version,
                                   strategy.resource, attrs.subresource, strategy.kind,
                                   self.namespace, attrs.name)
        self.obj: Obj | None = attrs.obj if isinstance(attrs.obj, dict) else None
        self.dirty = False  # a webhook changed obj
        self._defaulted = False
        self._context, self._namespace_get = context, namespace_get
        self._old: Obj | None = None
        self._old_read = False
        self._labels: dict[str, str] | None = None
        self._versions: dict[str, str] | None = None

    # -- lazily read ----------------------------------------------------------------------
    async def old(self) -> Obj | None:
        if not self._old_read:
            self._old_read = True
            if self.attrs.old_obj is not None:
                self._old = self.attrs.old_obj
            elif self.attrs.operation in ("UPDATE", "DELETE"):
                try:
                    self._old = await self.attrs.read_old()
                except errors.StatusError as exc:
                    if exc.code != 404:
                        raise
        return self._old

    async def namespace_labels(self) -> dict[str, str]:
        if self._labels is None:
            labels = rules.namespace_labels_from_request(self.match, self.obj)
            if labels is None:
                try:
                    labels = rules.labels_of(await self._namespace_get(self.namespace))
                except errors.StatusError as exc:
                    raise errors.internal_error(exc.message) from None
            self._labels = labels
        return self._labels

    def kinds(self) -> dict[str, str]:
        """version -> kind of every served version of this resource (matchPolicy
        Equivalent)."""
        if self._versions is None:
            strategy = self.attrs.strategy
            self._versions = {s.version: s.kind
                              for s in self._context.versions(strategy.group, strategy.resource)}
            self._versions.setdefault(strategy.version, strategy.kind)
        return self._versions

    def versions(self) -> list[str]:
        """Every served version of this resource (matchPolicy Equivalent)."""
        return list(self.kinds())

    async def defaulted(self) -> Obj | None:
        """The object as upstream's decoder hands it over: a copy, with defaults."""
        if not self._defaulted and self.obj is not None:
            self._defaulted = True
            obj = self.obj
            gvk = self.kind_of(self.resource)  # a subresource's own kind (Scale, ...)

            def prepare() -> Obj:
                copy = codec.clone(obj)
                apply_defaults(gvk["kind"], copy, gvk["group"])
                return copy
            self.obj = await offload.run(prepare)
        return self.obj

    # -- what is sent ---------------------------------------------------------------------
    def kind_of(self, resource: rules.GVR) -> dict[str, str]:
        strategy = self.attrs.strategy
        sub = strategy.subresource(self.attrs.subresource) if self.attrs.subresource else None
        if sub is not None and sub.kind:
            return {"group": sub.group if sub.group is not None else resource.group,
                    "version": sub.version or resource.version, "kind": sub.kind}
        return {"group": resource.group, "version": resource.version,
                "kind": self.kinds().get(resource.version, strategy.kind)}

    async def versioned(self, obj: Obj | None, resource: rules.GVR) -> Obj | None:
        """`obj` in the matched version: through the CRD's converter (its conversion webhook,
        or for `None` just the apiVersion), as upstream's VersionedAttributes converts; a
        conversion that fails is the converter's 500."""
        if obj is None or resource == self.resource or self.attrs.subresource:
            return obj
        return await self._convert(obj, _api_version(resource))

    async def unversioned(self, obj: Obj, resource: rules.GVR) -> Obj:
        """A webhook's patched object back in the request's version."""
        if resource == self.resource or self.attrs.subresource:
            return obj
        return await self._convert(obj, _api_version(self.resource))

    async def _convert(self, obj: Obj, api_version: str) -> Obj:
        if not obj.get("apiVersion"):  # a body may leave it out: it is the request's version
            obj = dict(obj, apiVersion=_api_version(self.resource))
        converter = self.attrs.strategy.conversion
        if converter is None:
            return dict(obj, apiVersion=api_version)
        [converted] = await converter.convert([obj], api_version)
        return converted

    def request(self, uid: str, resource: rules.GVR, obj: Obj | None,
                old: Obj | None) -> Obj:
        """AdmissionRequest (CreateV1AdmissionReview), omitempty fields left out."""
        attrs = self.attrs
        requested = self.resource
        body: Obj = {
            "uid": uid, "kind": self.kind_of(resource),
            "resource": {"group": resource.group, "version": resource.version,
                         "resource": resource.resource}}
        if attrs.subresource:
            body["subResource"] = attrs.subresource
        body["requestKind"] = self.kind_of(requested)
        body["requestResource"] = {"group": requested.group, "version": requested.version,
                                   "resource": requested.resource}
        if attrs.subresource:
            body["requestSubResource"] = attrs.subresource
        name = attrs.name or meta.metadata(obj or {}).get("name", "")
        if name:
            body["name"] = name
        if self.namespace:
            body["namespace"] = self.namespace
        body["operation"] = attrs.operation
        body["userInfo"] = _user_info(attrs.user)
        body["object"] = obj
        body["oldObject"] = old
        body["dryRun"] = attrs.dry_run
        body["options"] = attrs.options
        return body


def _user_info(user: Any) -> Obj:
    if user is None:
        return dict(_UNSECURED)
    return user.to_api()


def _api_version(resource: rules.GVR) -> str:
    return f"{resource.group}/{resource.version}" if resource.group else resource.version
