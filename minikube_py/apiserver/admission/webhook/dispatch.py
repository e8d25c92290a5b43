"""MutatingAdmissionWebhook and ValidatingAdmissionWebhook: calling the webhooks that match.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go
(webhooks one after another, in configuration-name order; each JSONPatch applied to the object
the next one sees; `reinvocationPolicy: IfNeeded` webhooks called once more when a later
webhook changed the object), validating/dispatcher.go (all matching webhooks at once; the
first error wins), generic/webhook.go (ShouldCallHook, the exemption of admissionregistration
objects) and the failurePolicy handling both dispatchers share (a call that yields no decision
is skipped under Ignore, a 500 under Fail; a denial is always final).

Differences, on purpose: the webhooks see the object as the handler has it, defaulted the way
upstream's decoder defaults it; our registry prepares it (a new pod's initial status) only
after admission, so a validating webhook does not see those server-set fields. Reinvocation
reruns webhooks only for changes made by later webhooks (upstream also reruns them when a
later built-in plugin changed the object).
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

from .... import offload
from ....api import errors, meta
from ...webhook_client import WebhookCallError
from ..chain import Attributes, PluginContext
from . import conditions, review, rules
from .attributes import NamespaceGetter, WebhookAttributes
from .source import ConfigurationSource, Hook

log = structlog.get_logger(component="admission-webhook")

Obj = dict[str, Any]


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

    async def invocation(self, hook: Hook, req: WebhookAttributes) -> rules.GVR | None:
        """ShouldCallHook: the resource to call `hook` for, or None to skip it."""
        resource = rules.matched_resource(hook.spec, req.match, req.versions)
        if resource is None:
            return None
        if rules.needs_namespace_labels(hook.namespace_selector, req.match) and \
                not hook.namespace_selector.matches(await req.namespace_labels()):
            return None
        if not hook.object_selector.empty() and not rules.object_selector_matches(
                hook.object_selector, req.obj, await req.old()):
            return None
        if hook.conditions:
            old = await req.versioned(await req.old(), resource)
            obj = await req.versioned(req.obj, resource)
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

    async def call(self, hook: Hook, req: WebhookAttributes, resource: rules.GVR,
                   obj: Obj | None) -> review.Response:
        """One AdmissionReview round trip; CallingWebhookError when it yields no decision."""
        if req.attrs.dry_run and hook.spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise review.dry_run_unsupported(hook.name)
        version = review.review_version(hook.spec)
        uid = meta.new_uid()
        body = review.build_review(version, req.request(
            uid, resource, obj, await req.versioned(await req.old(), resource)))
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
        req = WebhookAttributes(attrs, self.context, self.namespace_get)
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

    async def _one(self, hook: Hook, req: WebhookAttributes) -> bool | None:
        """Call `hook` if it applies: None when skipped, else whether it changed the object."""
        resource = await self.invocation(hook, req)
        if resource is None:
            return None
        current = await req.defaulted()
        sent = await req.versioned(current, resource)
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
        req.obj = await req.unversioned(patched, resource)  # back to the request's version
        req.dirty = True
        return True


class ValidatingAdmissionWebhook(WebhookAdmission):
    name = "ValidatingAdmissionWebhook"
    mutating = False

    async def admit(self, attrs: Attributes) -> None:
        if self._skip(attrs):
            return
        req = WebhookAttributes(attrs, self.context, self.namespace_get)
        calls = []
        for hook in self.source.hooks:
            resource = await self.invocation(hook, req)
            if resource is not None:
                calls.append((hook, resource))
        if not calls:
            return
        obj = await req.defaulted()
        sent = [await req.versioned(obj, resource) for _, resource in calls]
        results = await asyncio.gather(
            *(self._one(hook, req, resource, versioned)
              for (hook, resource), versioned in zip(calls, sent)), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _one(self, hook: Hook, req: WebhookAttributes, resource: rules.GVR,
                   obj: Obj | None) -> None:
        try:
            await self.call(hook, req, resource, obj)
        except review.CallingWebhookError as exc:
            self.failed(hook, exc)
