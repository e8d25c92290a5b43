"""The ValidatingAdmissionPolicy admission plugin: CEL policies bound to requests.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/plugin/policy/validating (plugin.go,
dispatcher.go: for each policy whose matchConstraints match, each binding whose
matchResources match, each param the binding's paramRef selects, evaluate; Deny collects the
first denial into one Status, Warn becomes a `Warning` header, Audit an audit annotation) and
policy/generic (policy_source.go: policies and bindings from informers, compiled once per
version; CollectParams: paramRef by name or selector, namespace rules, parameterNotFoundAction).

The I/O shell around pure parts: matching.py decides which policies apply, compile.py holds
the compiled CEL, evaluate.py decides. Policies, bindings and namespaces come from informers
(informer.py) on the server's own store; params are read from their registry when a binding
that needs them matches. With no binding in the cluster a request costs one dict lookup.

Differences from upstream (documented in docs): no audit log, so Audit and auditAnnotations
are logged (structlog) rather than written to audit events; `authorizer` is not available to
expressions; objects are not converted between versions for matchPolicy Equivalent (the
request's own object is evaluated); `status.typeChecking` stays empty (observedGeneration is
recorded).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
import structlog

from .... import offload
from ....api import errors
from ....registry import codec
from ....registry.admissionpolicies import (
    GROUP,
    VALIDATING_ADMISSION_POLICIES,
    VALIDATING_ADMISSION_POLICY_BINDINGS,
    set_compile_check,
)
from ..chain import Attributes
from ..denial import forbidden
from ..informer import StoreInformer
from . import matching
from .compile import CompiledPolicy, compile_errors, compiled
from .evaluate import Outcome, evaluate
from .request import PolicyAttributes

if TYPE_CHECKING:
    from ....registry.generic import Registry
    from ..lookup import RegistryLookup

log = structlog.get_logger(component="apiserver.admission.validatingadmissionpolicy")

Obj = dict[str, Any]

#: upstream reasonToCode
_REASON_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413,
                 "Invalid": 422}
#: the annotation key upstream's Audit action publishes
VALIDATION_FAILURE_ANNOTATION = "validation.policy.admission.k8s.io/validation_failure"

set_compile_check(compile_errors)  # a policy whose CEL does not compile is a 422 on write


@dataclass(frozen=True)
class Hook:
    """A policy with its bindings (upstream PolicyHook)."""

    policy: CompiledPolicy
    bindings: tuple[Obj, ...]


@dataclass(frozen=True)
class Denial:
    policy: str
    binding: str
    message: str
    reason: str = ""


class ConfigError(Exception):
    """A binding (or policy) that cannot be applied: its param is missing, misplaced, ..."""


class ValidatingAdmissionPolicy:
    name = "ValidatingAdmissionPolicy"

    def __init__(self, lookup: RegistryLookup) -> None:
        self._lookup = lookup
        policies = lookup(GROUP, VALIDATING_ADMISSION_POLICIES.resource)
        bindings = lookup(GROUP, VALIDATING_ADMISSION_POLICY_BINDINGS.resource)
        namespaces = lookup("", "namespaces")
        assert policies is not None and bindings is not None and namespaces is not None
        self._policy_registry = policies
        self.policies = StoreInformer(policies.store, policies.root, "validatingadmissionpolicies")
        self.bindings = StoreInformer(bindings.store, bindings.root,
                                      "validatingadmissionpolicybindings")
        self.namespaces = StoreInformer(namespaces.store, namespaces.root, "namespaces")
        self._namespace_registry = namespaces
        self._hooks: tuple[Hook, ...] = ()
        self._built_for = (-1, -1)
        self._status_task: asyncio.Task | None = None
        self._status_wanted = asyncio.Event()
        #: one informer per paramKind in use (by the param registry's key root), started
        #: when a binding first needs it (upstream's policy source does the same)
        self._param_informers: dict[str, StoreInformer] = {}
        self._param_lock = asyncio.Lock()

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self, context: Any = None) -> None:
        """Sync the informers before the server serves (`context`: the chain's plugin
        context, when it hands one over; nothing in it is needed here)."""
        for informer in (self.policies, self.bindings, self.namespaces):
            await informer.start()
        self.policies.listeners.append(self._status_wanted.set)
        self._status_wanted.set()
        self._status_task = asyncio.create_task(self._record_status(), name="vap-status")

    async def stop(self) -> None:
        if self._status_task is not None:
            self._status_task.cancel()
            try:
                await self._status_task
            except asyncio.CancelledError:
                pass
        for informer in (self.policies, self.bindings, self.namespaces,
                         *self._param_informers.values()):
            await informer.stop()
        self._param_informers.clear()

    # -- the hooks, rebuilt when a policy or binding changed ----------------------------------
    def hooks(self) -> tuple[Hook, ...]:
        versions = (self.policies.version, self.bindings.version)
        if versions != self._built_for:
            self._hooks = self._build_hooks()
            self._built_for = versions
        return self._hooks

    def _build_hooks(self) -> tuple[Hook, ...]:
        by_policy: dict[str, list[Obj]] = {}
        for binding in self.bindings.items.values():
            name = (binding.get("spec") or {}).get("policyName")
            if isinstance(name, str):
                by_policy.setdefault(name, []).append(binding)
        hooks = []
        for policy in sorted(self.policies.items.values(),
                             key=lambda p: p["metadata"]["name"]):
            bound = by_policy.get(policy["metadata"]["name"])
            if bound:
                bound.sort(key=lambda b: b["metadata"]["name"])
                hooks.append(Hook(compiled(policy), tuple(bound)))
        return tuple(hooks)

    # -- admission ------------------------------------------------------------------------------
    async def admit(self, attrs: Attributes) -> None:
        hooks = self.hooks()
        if not hooks or attrs.strategy.group == GROUP:
            return  # upstream exempts the admission configuration resources themselves
        request = PolicyAttributes(attrs, self._lookup, self.namespaces,
                                   self._namespace_registry)
        denials: list[Denial] = []
        for hook in hooks:
            await self._dispatch(hook, request, denials)
        if denials:
            raise _status(attrs, denials[0], denials)

    async def _dispatch(self, hook: Hook, request: PolicyAttributes, denials: list[Denial]) -> None:
        policy = hook.policy
        req = request.bare
        if matching.rules_match(policy.match_constraints, req, request.versions) is None:
            return
        req = await request.full()
        ns_labels = await request.namespace_labels()
        try:
            if matching.resources_match(policy.match_constraints, req, ns_labels,
                                        request.versions) is None:
                return
        except errors.StatusError as exc:  # a selector stored by an older, laxer server
            self._config_error(policy, None, exc.message, denials)
            return
        if policy.error:
            self._config_error(policy, None, policy.error, denials)
            return
        for binding in hook.bindings:
            spec = binding.get("spec") or {}
            try:
                if matching.resources_match(spec.get("matchResources"), req, ns_labels,
                                            request.versions) is None:
                    continue
                params = await self._params(policy, spec.get("paramRef"), req.namespace)
            except (ConfigError, errors.StatusError) as exc:
                self._config_error(policy, binding, str(exc), denials)
                continue
            for param in params:
                activation = await request.activation(param)
                outcome = await offload.run(evaluate, policy, activation)
                self._act(policy, binding, outcome, request.attrs, denials)

    def _config_error(self, policy: CompiledPolicy, binding: Obj | None, message: str,
                      denials: list[Denial]) -> None:
        """upstream addConfigError: failurePolicy Ignore skips, Fail denies."""
        if policy.failure_policy == "Ignore":
            return
        if binding is None:
            denials.append(Denial(policy.name, "", f"failed to configure policy: {message}"))
        else:
            denials.append(Denial(policy.name, binding["metadata"]["name"],
                                  f"failed to configure binding: {message}"))

    def _act(self, policy: CompiledPolicy, binding: Obj, outcome: Outcome, attrs: Attributes,
             denials: list[Denial]) -> None:
        """Each denial goes where the binding's validationActions say."""
        binding_name = binding["metadata"]["name"]
        actions = (binding.get("spec") or {}).get("validationActions") or ()
        for decision in outcome.denials:
            for action in actions:
                if action == "Deny":
                    denials.append(Denial(policy.name, binding_name, decision.message,
                                          decision.reason))
                elif action == "Warn" and attrs.warnings is not None:
                    attrs.warnings.append(
                        f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' with "
                        f"binding '{binding_name}': {decision.message}")
                elif action == "Audit":
                    log.info("validation failure (audit)", annotation=VALIDATION_FAILURE_ANNOTATION,
                             value=orjson.dumps([{
                                 "message": decision.message, "policy": policy.name,
                                 "binding": binding_name, "expressionIndex": decision.index,
                                 "validationActions": list(actions)}]).decode())
        for key, value in outcome.annotations.items():
            log.info("audit annotation", key=f"{policy.name}/{key}", value=value)

    # -- params (upstream CollectParams) --------------------------------------------------------
    async def _params(self, policy: CompiledPolicy, ref: Any,
                      namespace: str) -> list[Obj | None]:
        kind = policy.param_kind
        if kind is None or not isinstance(ref, dict):
            return [None]  # no paramKind, or a binding without paramRef: params is null
        group, _, version = str(kind.get("apiVersion", "")).rpartition("/")
        registry = self._lookup.by_kind(group, version, str(kind.get("kind", "")))
        if registry is None:
            raise ConfigError(f"paramKind kind `{_kind_text(kind)}` not known")
        params_ns = ""
        if registry.strategy.namespaced:
            params_ns = ref.get("namespace") or namespace
            if not params_ns:
                raise ConfigError("cannot use namespaced paramRef in policy binding that "
                                  "matches cluster-scoped resources")
        elif ref.get("namespace"):
            raise ConfigError("paramRef.namespace must not be provided for a cluster-scoped "
                              "`paramKind`")
        params = await self._read_params(registry, params_ns, ref)
        if not params and ref.get("parameterNotFoundAction") == "Deny":
            raise ConfigError("no params found for policy binding with `Deny` "
                              "parameterNotFoundAction")
        return list(params)

    async def _param_informer(self, registry: Registry) -> StoreInformer:
        informer = self._param_informers.get(registry.root)
        if informer is None:
            async with self._param_lock:
                informer = self._param_informers.get(registry.root)
                if informer is None:
                    informer = StoreInformer(registry.store, registry.root,
                                             f"params:{registry.strategy.resource}")
                    await informer.start()
                    self._param_informers[registry.root] = informer
        return informer

    async def _read_params(self, registry: Registry, namespace: str, ref: Obj) -> list[Obj]:
        """Params from the paramKind's informer; a name it has not seen yet is read from the
        registry (upstream's getParamDirectly: a param created just before the request)."""
        informer = await self._param_informer(registry)
        name = ref.get("name")
        if name:
            found = informer.by_name(namespace, name)
            if found is not None:
                return [registry.served(found)]
            try:
                return [await registry.get(namespace, name)]
            except errors.StatusError as exc:
                if exc.code == 404:
                    return []
                raise
        selector = matching.compile_selector(ref.get("selector"))
        prefix = f"{informer.prefix}{namespace}/" if namespace else informer.prefix
        return [registry.served(obj) for key, obj in sorted(informer.items.items())
                if key.startswith(prefix)
                and selector.matches(((obj.get("metadata") or {}).get("labels")) or {})]

    # -- status: observedGeneration (upstream's type-checking controller) ---------------------
    async def _record_status(self) -> None:
        while True:
            await self._status_wanted.wait()
            self._status_wanted.clear()
            for policy in list(self.policies.items.values()):
                md = policy["metadata"]
                status = policy.get("status") if isinstance(policy.get("status"), dict) else {}
                if status.get("observedGeneration") == md.get("generation"):
                    continue
                try:
                    await self._policy_registry.update(
                        "", md["name"], _observed(md.get("generation")), subresource="status")
                except errors.StatusError as exc:
                    if exc.code not in (404, 409):
                        log.warning("policy status not recorded", policy=md["name"],
                                    error=exc.message)


def _observed(generation: Any):
    def produce(old: Obj | None) -> Obj:
        assert old is not None
        new = codec.clone(old)
        status = new.get("status") if isinstance(new.get("status"), dict) else {}
        status.update(observedGeneration=generation, typeChecking={})
        new["status"] = status
        return new
    return produce


def _kind_text(kind: Obj) -> str:
    """GroupVersionKind.String() of a paramKind: `group/version, Kind=kind`."""
    return f"{kind.get('apiVersion', '')}, Kind={kind.get('kind', '')}"




def _status(attrs: Attributes, first: Denial, denials: list[Denial]) -> errors.StatusError:
    """upstream's Dispatch: NewForbidden's message around the first denial, with its reason
    and code (Invalid, 422, when the validation names none) and every denial as a cause."""
    def text(d: Denial) -> str:
        if d.binding:
            return (f"ValidatingAdmissionPolicy '{d.policy}' with binding '{d.binding}' denied "
                    f"request: {d.message}")
        return f"ValidatingAdmissionPolicy '{d.policy}' denied request: {d.message}"

    base = forbidden(attrs, text(first))
    reason = first.reason or "Invalid"
    details = dict(base.details or {})
    details["causes"] = [{"message": text(first)}]
    return errors.StatusError(_REASON_CODES.get(reason, 422), reason, base.message, details)
