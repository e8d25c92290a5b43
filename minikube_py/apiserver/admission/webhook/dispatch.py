"""MutatingAdmissionWebhook and ValidatingAdmissionWebhook: calling the webhooks that match.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go
(webhooks one after another, in configuration-name order; each JSONPatch applied to the object
the next one sees; `reinvocationPolicy: IfNeeded` webhooks called once more when a later
webhook changed the object), validating/dispatcher.go (all matching webhooks at once; the
first error wins), generic/webhook.go (ShouldCallHook, the exemption of admissionregistration
objects) and the failurePolicy handling both dispatchers share (a call that yields no decision
is skipped under Ignore, a 500 under Fail; a denial is always final).

Differences, on purpose: the webhooks see the object as the handler has it, defaulted here the
way upstream's decoder defaults it (our registry defaults, validates and, for status, resets
after admission, so a validating webhook sees no server-set fields such as a pod's
initial status). Reinvocation reruns webhooks only for changes made by later webhooks
(upstream also reruns them when a later built-in plugin changed the object).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from .... import offload
from ....api import errors, meta
from ....api.defaults import apply_defaults
from ....registry import codec
from ...webhook_client import WebhookCallError
from ..chain import Attributes, PluginContext
from . import conditions, review, rules
from .source import ConfigurationSource, Hook

log = structlog.get_logger(component="admission-webhook")

Obj = dict[str, Any]
NamespaceGetter = Callable[[str], Awaitable[Obj]]
_UNSECURED = {"username": "system:unsecured",
              "groups": ["system:masters", "system:authenticated"]}


class _Request:
    """One admission call: what the rules see, with the old object and the namespace's labels
    read at most once and only when a matching webhook needs them."""

    __slots__ = ("_context", "_defaulted", "_labels", "_namespace_get", "_old", "_old_read",
                 "_versions", "attrs", "dirty", "match", "namespace", "obj", "resource")

    def __init__(self, attrs: Attributes, context: PluginContext,
                 namespace_get: NamespaceGetter) -> None:
        self.attrs = attrs
        strategy = attrs.strategy
        self.resource = rules.GVR(strategy.group, strategy.version, strategy.resource)
        is_namespace = self.resource == rules.GVR("", "v1", "namespaces")
        self.namespace = attrs.name if is_namespace else attrs.namespace
        self.match = rules.Request(attrs.operation, self.resource, attrs.subresource,
                                   self.namespace)
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

    def equivalents(self) -> list[rules.GVR]:
        return [rules.GVR(self.resource.group, v, self.resource.resource) for v in self.kinds()]

    async def defaulted(self) -> Obj | None:
        """The object as upstream's decoder hands it over: a copy, with defaults."""
        if not self._defaulted and self.obj is not None:
            self._defaulted = True
            obj = self.obj
            kind = self.kind_of(self.resource)["kind"]  # a subresource's own kind (Scale, ...)

            def prepare() -> Obj:
                copy = codec.clone(obj)
                apply_defaults(kind, copy)
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

    def versioned(self, obj: Obj | None, resource: rules.GVR) -> Obj | None:
        """`obj` in the matched version (for a CRD with conversion None: its apiVersion)."""
        if obj is None or resource == self.resource or self.attrs.subresource:
            return obj
        converted = dict(obj)
        converted["apiVersion"] = f"{resource.group}/{resource.version}" if resource.group \
            else resource.version
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
    info: Obj = {"username": user.name}
    if user.uid:
        info["uid"] = user.uid
    if user.groups:
        info["groups"] = list(user.groups)
    return info


class WebhookAdmission:
    """The part both plugins share: matching and calling one webhook."""

    name = ""
    mutating = False

    def __init__(self, source: ConfigurationSource, namespace_get: NamespaceGetter) -> None:
        self.source = source
        self.namespace_get = namespace_get
        self.context = PluginContext()

    async def start(self, context: PluginContext) -> None:
        self.context = context
        await self.source.start()

    async def stop(self) -> None:
        await self.source.stop()

    def _skip(self, attrs: Attributes) -> bool:
        strategy = attrs.strategy
        return not self.source.hooks or rules.exempt(
            rules.GVR(strategy.group, strategy.version, strategy.resource))

    async def invocation(self, hook: Hook, req: _Request) -> rules.GVR | None:
        """ShouldCallHook: the resource to call `hook` for, or None to skip it."""
        resource = rules.matched_resource(hook.spec, req.match, req.equivalents)
        if resource is None:
            return None
        if rules.needs_namespace_labels(hook.namespace_selector, req.match) and \
                not hook.namespace_selector.matches(await req.namespace_labels()):
            return None
        if not hook.object_selector.empty() and not rules.object_selector_matches(
                hook.object_selector, req.obj, await req.old()):
            return None
        if hook.conditions:
            old = req.versioned(await req.old(), resource)
            obj = req.versioned(req.obj, resource)
            activation = {"object": obj, "oldObject": old,
                          "request": req.request("", resource, None, None)}
            matches, error = conditions.evaluate(hook.conditions, activation)
            if error:
                if hook.spec.get("failurePolicy") == "Ignore":
                    return None
                strategy = req.attrs.strategy
                raise errors.forbidden_request(
                    f'{strategy.qualified_resource} "{req.attrs.name}" is forbidden: {error}',
                    strategy.resource, req.attrs.name, strategy.group)
            if not matches:
                return None
        return resource

    async def call(self, hook: Hook, req: _Request, resource: rules.GVR,
                   obj: Obj | None) -> review.Response:
        """One AdmissionReview round trip; CallingWebhookError when it yields no decision."""
        if req.attrs.dry_run and hook.spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise review.dry_run_unsupported(hook.name)
        version = review.review_version(hook.spec)
        uid = meta.new_uid()
        body = review.build_review(version, req.request(
            uid, resource, obj, req.versioned(await req.old(), resource)))
        timeout = int(hook.spec.get("timeoutSeconds") or 10)
        client = self.context.webhook_client
        if client is None:
            raise review.CallingWebhookError(hook.name, "could not get REST client: no webhook "
                                                        "client configured")
        try:
            answer = await client.post_json(hook.client, body, timeout,
                                            query=review.timeout_text(timeout))
        except WebhookCallError as exc:
            raise review.CallingWebhookError(hook.name, f"failed to call webhook: {exc}") from None
        response = review.verify_response(hook.name, version, uid, answer, self.mutating)
        for key, value in response.audit_annotations.items():
            log.info("audit annotation", webhook=hook.name, key=f"{hook.name}/{key}", value=value)
        if req.attrs.warnings is not None:
            req.attrs.warnings.extend(response.warnings)
        if not response.allowed:
            raise review.denied(hook.name, response.result)
        return response

    def failed(self, hook: Hook, exc: review.CallingWebhookError) -> None:
        """failurePolicy: Ignore logs and goes on; Fail answers 500."""
        if hook.spec.get("failurePolicy") == "Ignore":
            log.warning("failed calling webhook, failing open", webhook=hook.name,
                        error=str(exc))
            return
        log.warning("failed calling webhook, failing closed", webhook=hook.name, error=str(exc))
        raise exc.status_error() from None


class MutatingAdmissionWebhook(WebhookAdmission):
    name = "MutatingAdmissionWebhook"
    mutating = True

    async def admit(self, attrs: Attributes) -> None:
        if self._skip(attrs):
            return
        req = _Request(attrs, self.context, self.namespace_get)
        hooks = self.source.hooks
        invoked_reinvocable: set[tuple[str, int]] = set()
        reinvoke: set[tuple[str, int]] = set()
        for hook in hooks:
            changed = await self._one(hook, req)
            if changed:
                reinvoke |= invoked_reinvocable
            if changed is not None and hook.spec.get("reinvocationPolicy") == "IfNeeded":
                invoked_reinvocable.add(hook.uid)
        for hook in hooks:  # one more round, as upstream's reinvocation
            if hook.uid in reinvoke:
                await self._one(hook, req)
        if req.dirty and isinstance(attrs.obj, dict) and req.obj is not None:
            attrs.obj.clear()
            attrs.obj.update(req.obj)

    async def _one(self, hook: Hook, req: _Request) -> bool | None:
        """Call `hook` if it applies: None when skipped, else whether it changed the object."""
        resource = await self.invocation(hook, req)
        if resource is None:
            return None
        current = await req.defaulted()
        sent = req.versioned(current, resource)
        try:
            response = await self.call(hook, req, resource, sent)
        except review.CallingWebhookError as exc:
            self.failed(hook, exc)
            return False
        if not response.patch:
            return False
        try:  # upstream's order: decode, an empty patch, no object, then the patch type
            operations = review.decode_patch(hook.name, response.patch)
            if not operations:
                return False
            if sent is None:
                raise errors.internal_error(
                    f'admission webhook "{hook.name}" attempted to modify the object, which is '
                    "not supported for this operation")
            if response.patch_type != "JSONPatch":
                raise review.CallingWebhookError(
                    hook.name, f'unsupported patch type "{response.patch_type}"')
        except review.CallingWebhookError as exc:
            self.failed(hook, exc)
            return False
        patched = await offload.run(review.apply_patch, hook.name, sent, operations)
        if patched == sent:
            return False
        if current is not None and sent is not current:  # back to the requested version
            patched["apiVersion"] = current.get("apiVersion")
        req.obj = patched
        req.dirty = True
        return True


class ValidatingAdmissionWebhook(WebhookAdmission):
    name = "ValidatingAdmissionWebhook"
    mutating = False

    async def admit(self, attrs: Attributes) -> None:
        if self._skip(attrs):
            return
        req = _Request(attrs, self.context, self.namespace_get)
        calls = []
        for hook in self.source.hooks:
            resource = await self.invocation(hook, req)
            if resource is not None:
                calls.append((hook, resource))
        if not calls:
            return
        obj = await req.defaulted()
        results = await asyncio.gather(
            *(self._one(hook, req, resource, req.versioned(obj, resource))
              for hook, resource in calls), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _one(self, hook: Hook, req: _Request, resource: rules.GVR,
                   obj: Obj | None) -> None:
        try:
            await self.call(hook, req, resource, obj)
        except review.CallingWebhookError as exc:
            self.failed(hook, exc)
