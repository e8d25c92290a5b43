"""Admission plugin names -> constructors, and the chain the flags ask for.

Kubernetes v1.0 piece: pkg/admission/plugins.go (RegisterPlugin / InitPlugin /
NewFromPlugins). Plugins are built from the API server's own registries and the shared
informers of listers.py (upstream hands them the server's client and informers) and the API server's options (the plugins' own flags, such as
--default-not-ready-toleration-seconds). An unknown name is a startup error naming it and
listing the known plugins, as upstream's "Unknown admission plugin" is. Which plugins run by
default, and in which order, is order.py's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from ...registry.generic import Registry
from .always import AlwaysAdmit, AlwaysDeny
from .certificates import (
    CertificateApproval,
    CertificateSigning,
    CertificateSubjectRestriction,
)
from .chain import AdmissionChain, Plugin
from .default_ingress_class import DefaultIngressClass
from .default_storage_class import DefaultStorageClass
from .default_toleration_seconds import DefaultTolerationSeconds
from .limit_ranger import LimitRanger
from .listers import (
    NamespacedLister,
    SharedInformers,
    automount_only,
    cached,
    cached_list,
    cached_or_live,
    namespace_phase,
)
from .lookup import Lookup, RegistryLookup, registry_lookup  # noqa: F401 (re-exported)
from .namespace_exists import NamespaceAutoProvision, NamespaceExists
from .namespace_lifecycle import NamespaceLifecycle
from .policy.plugin import ValidatingAdmissionPolicy
from .priority import DefaultClassIndex, Priority
from .resource_quota import ResourceQuota
from .runtime_class import RuntimeClass
from .security_context_deny import SecurityContextDeny
from .service_account import ServiceAccount
from .webhook import (
    ConfigurationSource,
    MutatingAdmissionWebhook,
    ValidatingAdmissionWebhook,
)


def _required(lookup: Lookup, group: str, resource: str) -> Registry:
    registry = lookup(group, resource)
    if registry is None:
        raise ValueError(f"admission: no registry for {resource}")
    return registry


def _namespaces(lookup: Lookup) -> Registry:
    return _required(lookup, "", "namespaces")


async def _list_all(registry: Registry, namespace: str) -> list[dict[str, Any]]:
    return (await registry.list(namespace)).decoded()


def _informers(lookup: Lookup) -> SharedInformers:
    """The server's shared admission informers; a bare Lookup (tests) gets a factory nobody
    starts, whose listers read live."""
    informers = getattr(lookup, "informers", None)
    return informers if isinstance(informers, SharedInformers) else SharedInformers()


def _namespace_lifecycle(lookup: Lookup, options: Any) -> Plugin:
    namespaces = _namespaces(lookup)
    informer = _informers(lookup).informer(namespaces, namespace_phase)
    return NamespaceLifecycle(lambda ns: namespaces.get("", ns),
                              lambda ns: cached(informer, "", ns))


def _resource_quota(lookup: Lookup, options: Any) -> Plugin:
    quotas = _required(lookup, "", "resourcequotas")
    return ResourceQuota(lookup, NamespacedLister(_informers(lookup).informer(quotas), quotas))


def _limit_ranger(lookup: Lookup, options: Any) -> Plugin:
    limit_ranges = _required(lookup, "", "limitranges")
    return LimitRanger(NamespacedLister(_informers(lookup).informer(limit_ranges),
                                        limit_ranges).list)


def _service_account(lookup: Lookup, options: Any) -> Plugin:
    accounts = _required(lookup, "", "serviceaccounts")
    return ServiceAccount(cached_or_live(_informers(lookup).informer(accounts, automount_only),
                                         accounts))


def _namespace_getter(lookup: Lookup) -> Callable[[str], Awaitable[dict[str, Any]]]:
    """get(name): the namespace's phase from the shared cache, a live get on a miss."""
    namespaces = _namespaces(lookup)
    get = cached_or_live(_informers(lookup).informer(namespaces, namespace_phase), namespaces)
    return lambda name: get("", name)


def _auto_provision(lookup: Lookup, options: Any) -> Plugin:
    namespaces = _namespaces(lookup)
    return NamespaceAutoProvision(_namespace_getter(lookup),
                                  lambda obj: namespaces.create("", obj))


def _priority(lookup: Lookup, options: Any) -> Plugin:
    classes = _required(lookup, "scheduling.k8s.io", "priorityclasses")
    pods = _required(lookup, "", "pods")
    informer = _informers(lookup).informer(classes)
    get_class = cached_or_live(informer, classes)
    return Priority(lambda: _list_all(classes, ""), lambda name: get_class("", name), pods.get,
                    DefaultClassIndex(informer))


def _default_ingress_class(lookup: Lookup, options: Any) -> Plugin:
    classes = _required(lookup, "networking.k8s.io", "ingressclasses")
    return DefaultIngressClass(cached_list(_informers(lookup).informer(classes), classes))


def _runtime_class(lookup: Lookup, options: Any) -> Plugin:
    classes = _required(lookup, "node.k8s.io", "runtimeclasses")
    get_class = cached_or_live(_informers(lookup).informer(classes), classes)
    return RuntimeClass(lambda name: get_class("", name))


def _default_storage_class(lookup: Lookup, options: Any) -> Plugin:
    classes = _required(lookup, "storage.k8s.io", "storageclasses")
    return DefaultStorageClass(cached_list(_informers(lookup).informer(classes), classes))


def _validating_admission_policy(lookup: Lookup, options: Any) -> Plugin:
    if not isinstance(lookup, RegistryLookup):
        raise TypeError("admission: ValidatingAdmissionPolicy needs the server's registry table")
    return ValidatingAdmissionPolicy(lookup)


def _default_toleration_seconds(lookup: Lookup, options: Any) -> Plugin:
    if options is None:
        return DefaultTolerationSeconds()
    return DefaultTolerationSeconds(options.default_not_ready_toleration_seconds,
                                    options.default_unreachable_toleration_seconds)


def _webhooks(plugin: type, resource: str) -> Callable[[Lookup, Any], Plugin]:
    """MutatingAdmissionWebhook / ValidatingAdmissionWebhook over their configurations'
    keys (watched from start(), see chain.PluginContext)."""

    def build(lookup: Lookup, options: Any) -> Plugin:
        configs = _required(lookup, "admissionregistration.k8s.io", resource)
        return plugin(ConfigurationSource(configs.store, configs.root),
                      lambda ns: _namespaces(lookup).get("", ns))

    return build


#: plugin name -> constructor(lookup, API server options)
PLUGINS: Mapping[str, Callable[[Lookup, Any], Plugin]] = {
    "AlwaysAdmit": lambda lookup, options: AlwaysAdmit(),
    "AlwaysDeny": lambda lookup, options: AlwaysDeny(),
    "NamespaceLifecycle": _namespace_lifecycle,
    "NamespaceExists": lambda lookup, options: NamespaceExists(_namespace_getter(lookup)),
    "NamespaceAutoProvision": _auto_provision,
    "LimitRanger": _limit_ranger,
    "ResourceQuota": _resource_quota,
    "ServiceAccount": _service_account,
    "SecurityContextDeny": lambda lookup, options: SecurityContextDeny(),
    "Priority": _priority,
    "DefaultTolerationSeconds": _default_toleration_seconds,
    "DefaultStorageClass": _default_storage_class,
    "CertificateApproval": lambda lookup, options: CertificateApproval(),
    "CertificateSigning": lambda lookup, options: CertificateSigning(),
    "CertificateSubjectRestriction": lambda lookup, options: CertificateSubjectRestriction(),
    "DefaultIngressClass": _default_ingress_class,
    "RuntimeClass": _runtime_class,
    "MutatingAdmissionWebhook": _webhooks(MutatingAdmissionWebhook,
                                          "mutatingwebhookconfigurations"),
    "ValidatingAdmissionPolicy": _validating_admission_policy,
    "ValidatingAdmissionWebhook": _webhooks(ValidatingAdmissionWebhook,
                                            "validatingwebhookconfigurations"),
}


def check_names(names: Iterable[str]) -> None:
    """ValueError naming the first unknown plugin and listing the known ones."""
    for name in names:
        if name not in PLUGINS:
            raise ValueError(f'unknown admission plugin "{name}" in --admission-control; known '
                             f"plugins: {', '.join(sorted(PLUGINS))}")


def build_chain(names: Iterable[str], lookup: Lookup, options: Any = None) -> AdmissionChain:
    """The chain of `names`, in the order given (order.py decides the order of 1.31's flags;
    v1.0's `--admission-control` is taken as written)."""
    names = [n.strip() for n in names if n.strip()]
    check_names(names)
    return AdmissionChain([PLUGINS[name](lookup, options) for name in names],
                          getattr(lookup, "informers", None))
