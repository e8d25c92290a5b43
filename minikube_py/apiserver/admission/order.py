"""Which admission plugins run, and in which order: 1.31's defaults, or v1.0's explicit list.

Kubernetes piece: pkg/kubeapiserver/options/plugins.go (AllOrderedPlugins,
DefaultOffAdmissionPlugins) and k8s.io/apiserver's admission options (--enable-admission-plugins,
--disable-admission-plugins, the deprecated --admission-control). Since 1.10 the order is not the
user's: the plugins that are on run in AllOrderedPlugins' order, whatever order the flags name
them in. v1.0's `--admission-control=A,B` (the chain exactly as written) still selects v1.0's way.

Only plugins this server implements appear in the chains; the rest of upstream's ordered list is
kept so that `enabled()` can place a plugin we add later without another table.
"""

from __future__ import annotations

from collections.abc import Iterable

#: upstream AllOrderedPlugins of 1.31, with v1.0's SecurityContextDeny (removed in 1.30) in the
#: place it had until then
ALL_ORDERED_PLUGINS: tuple[str, ...] = (
    "AlwaysAdmit", "NamespaceAutoProvision", "NamespaceLifecycle", "NamespaceExists",
    "SecurityContextDeny", "LimitPodHardAntiAffinityTopology", "LimitRanger", "ServiceAccount",
    "NodeRestriction", "TaintNodesByCondition", "AlwaysPullImages", "ImagePolicyWebhook",
    "PodSecurity", "PodNodeSelector", "Priority", "DefaultTolerationSeconds",
    "PodTolerationRestriction", "EventRateLimit", "ExtendedResourceToleration",
    "DefaultStorageClass", "StorageObjectInUseProtection", "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize", "RuntimeClass", "CertificateApproval", "CertificateSigning",
    "ClusterTrustBundleAttest", "CertificateSubjectRestriction", "DefaultIngressClass",
    "DenyServiceExternalIPs", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook", "ResourceQuota", "AlwaysDeny",
)

#: the plugins 1.31 turns on when no flag says otherwise (upstream's defaultOnPlugins)
DEFAULT_ON_1_31: frozenset[str] = frozenset({
    "NamespaceLifecycle", "LimitRanger", "ServiceAccount", "TaintNodesByCondition", "PodSecurity",
    "Priority", "DefaultTolerationSeconds", "DefaultStorageClass", "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize", "RuntimeClass", "CertificateApproval", "CertificateSigning",
    "ClusterTrustBundleAttest", "CertificateSubjectRestriction", "DefaultIngressClass",
    "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook",
    "ResourceQuota",
})

#: v1.0's kube-apiserver default (`--admission-control=NamespaceLifecycle` in our v1.0 days)
V1_0_DEFAULT: tuple[str, ...] = ("NamespaceLifecycle",)


def enabled(known: Iterable[str], enable: Iterable[str] = (),
            disable: Iterable[str] = ()) -> tuple[str, ...]:
    """The chain for --enable-admission-plugins / --disable-admission-plugins: 1.31's default
    set plus `enable` minus `disable` (a name in both is enabled, as upstream), restricted to the
    `known` plugins among the defaults, in AllOrderedPlugins' order. ValueError names an
    unknown plugin (disabling one of upstream's plugins we do not have is fine)."""
    known = set(known)
    enable = [name for name in enable if name]
    disable = [name for name in disable if name]
    for name in enable:
        if name not in known:
            raise ValueError(f'unknown admission plugin "{name}" in --enable-admission-plugins;'
                             f" known plugins: {', '.join(sorted(known))}")
    for name in disable:  # upstream's names are accepted: `PodSecurity` is commonly disabled
        if name not in known and name not in ALL_ORDERED_PLUGINS:
            raise ValueError(f'unknown admission plugin "{name}" in --disable-admission-plugins;'
                             f" known plugins: {', '.join(sorted(known))}")
    on = (DEFAULT_ON_1_31 & known) - set(disable) | set(enable)
    return tuple(name for name in ALL_ORDERED_PLUGINS if name in on)
