"""Which admission plugins run by default, in which order, and what the flags change."""

from __future__ import annotations

import argparse

import pytest

from minikube_py.apiserver.admission import PLUGINS
from minikube_py.apiserver.admission.default_toleration_seconds import add_default_tolerations
from minikube_py.apiserver.admission.order import ALL_ORDERED_PLUGINS, enabled
from minikube_py.cli.start_options import StartOptions, add_start_flags
from minikube_py.cli.storage_target import ConfigError

#: 1.31's certificate plugins, between RuntimeClass and DefaultIngressClass (ClusterTrustBundleAttest,
#: which sits among them upstream, is not implemented: there are no ClusterTrustBundles)
CSR_PLUGINS = ("CertificateApproval", "CertificateSigning", "CertificateSubjectRestriction")
#: what runs between DefaultTolerationSeconds and the webhooks
BETWEEN = ("DefaultStorageClass", "RuntimeClass", *CSR_PLUGINS, "DefaultIngressClass")


def test_every_plugin_we_have_has_its_upstream_place() -> None:
    assert set(PLUGINS) <= set(ALL_ORDERED_PLUGINS)


def test_the_default_chain_is_1_31s_in_upstream_order() -> None:
    assert enabled(PLUGINS) == ("NamespaceLifecycle", "LimitRanger", "ServiceAccount",
                                "Priority", "DefaultTolerationSeconds", *BETWEEN,
                                "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy",
                                "ValidatingAdmissionWebhook", "ResourceQuota")


def test_enable_and_disable_keep_upstream_order_whatever_the_flag_order() -> None:
    chain = enabled(PLUGINS, ["AlwaysDeny", "NamespaceExists"], ["ResourceQuota", "PodSecurity"])
    assert chain == ("NamespaceLifecycle", "NamespaceExists", "LimitRanger", "ServiceAccount",
                     "Priority", "DefaultTolerationSeconds", *BETWEEN,
                     "MutatingAdmissionWebhook",
                     "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "AlwaysDeny")
    assert "Priority" in enabled(PLUGINS, ["Priority"], ["Priority"])  # both: enabled
    with pytest.raises(ValueError, match='"Bogus" in --enable-admission-plugins'):
        enabled(PLUGINS, ["Bogus"])
    with pytest.raises(ValueError, match='"Bogus" in --disable-admission-plugins'):
        enabled(PLUGINS, [], ["Bogus"])


def _options(*args: str) -> StartOptions:
    parser = argparse.ArgumentParser()
    add_start_flags(parser)
    return StartOptions.from_args(parser.parse_args(list(args)))


def test_flags_select_1_31_by_default_and_v1_0_on_request() -> None:
    assert _options().apiserver.admission_control == enabled(PLUGINS)
    assert _options("--admission-control=ServiceAccount,NamespaceLifecycle").apiserver \
        .admission_control == ("ServiceAccount", "NamespaceLifecycle")  # as written: v1.0
    assert _options("--disable-admission-plugins=ServiceAccount").apiserver \
        .admission_control == ("NamespaceLifecycle", "LimitRanger", "Priority",
                               "DefaultTolerationSeconds", *BETWEEN,
                               "MutatingAdmissionWebhook",
                               "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook",
                               "ResourceQuota")
    opts = _options("--default-not-ready-toleration-seconds=20").apiserver
    assert (opts.default_not_ready_toleration_seconds,
            opts.default_unreachable_toleration_seconds) == (20, 300)
    with pytest.raises(ConfigError, match="AlwaysPullImages"):
        _options("--enable-admission-plugins=AlwaysPullImages")


@pytest.mark.parametrize("tolerations, added", [
    (None, ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]),
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 10}], ["node.kubernetes.io/unreachable"]),
    ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}],  # any effect
     ["node.kubernetes.io/not-ready"]),
    ([{"operator": "Exists", "effect": "NoExecute"}], []),  # every key
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
     ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]),
])
def test_default_tolerations_only_for_taints_not_yet_tolerated(tolerations, added) -> None:
    spec: dict = {"containers": []}
    if tolerations is not None:
        spec["tolerations"] = list(tolerations)
    pod = {"spec": spec}
    add_default_tolerations(pod, 300, 300)
    new = pod["spec"].get("tolerations", [])[len(tolerations or ()):]
    assert [t["key"] for t in new] == added
    assert all(t["tolerationSeconds"] == 300 and t["effect"] == "NoExecute" for t in new)
